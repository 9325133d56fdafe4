import type { RunEvent } from '../../db/schema.js';
import { Html, html } from '../oauth/html.js';
import { json, time } from './layout.js';

/**
 * A run's event log as a timeline: one list item per event worth showing (model turns, tool calls with
 * their arguments and results, guardrail trips, pauses and answers, the end), rendered on the server so
 * every value is escaped. Text deltas are left out: the completed turn shows the whole text.
 */

export interface TimelineEntry {
  /** The list item, or nothing for an event the timeline does not show. */
  html: Html | undefined;
  /** The run's status after this event, when the event changes it. */
  status: string | undefined;
  /** Whether nothing follows (the run ended). */
  final: boolean;
}

/** Child runs a subagent call started, by the parent's step index. */
export type ChildRuns = (stepIndex: number) => Promise<string | undefined>;

const STATUS_AFTER: Record<string, string> = {
  'run.created': 'queued',
  'run.started': 'running',
  'run.paused': 'paused',
  'run.resumed': 'running',
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
};

export async function timelineEntry(event: Pick<RunEvent, 'seq' | 'type' | 'data' | 'created_at'>, childRun: ChildRuns): Promise<TimelineEntry> {
  const status = STATUS_AFTER[event.type];
  const final = event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled';
  const body = await entryBody(event.type, event.data, childRun);
  const entry = body
    ? html`<li class="${body.kind}" id="event-${String(event.seq)}" data-type="${event.type}"><span class="kind">${body.title}</span> <span class="meta">#${String(event.seq)} · ${time(event.created_at)}</span>
${body.content}</li>
`
    : undefined;
  return { html: entry, status, final };
}

async function entryBody(type: string, data: Record<string, unknown>, childRun: ChildRuns): Promise<{ kind: string; title: string | Html; content: Html } | undefined> {
  switch (type) {
    case 'run.created':
      return { kind: 'lifecycle', title: 'Run created', content: html`<div class="meta">version ${String(data.version ?? '')} · thread <code>${data.thread_id ?? ''}</code></div>` };
    case 'run.started':
      return { kind: 'lifecycle', title: 'Started', content: html`` };
    case 'message.completed': {
      const calls = Array.isArray(data.tool_calls) ? (data.tool_calls as { tool?: string; arguments?: unknown }[]) : [];
      const usage = data.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined;
      return {
        kind: 'model',
        title: html`Model turn ${String(data.turn ?? '')} <span class="meta">(node ${data.node_id ?? ''})</span>`,
        content: html`${data.text ? html`<div class="context">${String(data.text)}</div>` : ''}
${calls.length ? html`<div class="meta">asks for ${calls.map((c, i) => html`${i ? ', ' : ''}<code>${c.tool ?? ''}</code>`)}</div>` : ''}
${usage ? html`<div class="meta">${String(usage.prompt_tokens ?? '?')} prompt + ${String(usage.completion_tokens ?? '?')} completion tokens${typeof data.finish_reason === 'string' ? ` · ${data.finish_reason}` : ''}</div>` : ''}`,
      };
    }
    case 'tool_call.started': {
      const child = typeof data.step_index === 'number' ? await childRun(data.step_index) : undefined;
      return {
        kind: 'tool',
        title: html`Tool call <code>${data.tool ?? ''}</code> <span class="meta">step ${String(data.step_index ?? '')}</span>`,
        content: html`<div class="meta">arguments</div>${json(data.arguments ?? {})}${childLink(child)}`,
      };
    }
    case 'tool_call.completed': {
      const child = typeof data.step_index === 'number' ? await childRun(data.step_index) : undefined;
      const failed = data.error !== undefined;
      return {
        kind: failed ? 'failure' : 'tool',
        title: html`Tool <code>${data.tool ?? ''}</code> ${failed ? 'failed' : 'answered'} <span class="meta">step ${String(data.step_index ?? '')} · ${String(data.duration_ms ?? '?')} ms</span>`,
        content: html`<div class="meta">${failed ? 'error' : 'result'}</div>${json(failed ? data.error : data.result)}${childLink(child)}`,
      };
    }
    case 'guardrail.triggered':
      return {
        kind: 'guardrail',
        title: html`Guardrail <code>${data.name ?? ''}</code> tripped <span class="meta">${data.kind ?? ''} · ${data.action ?? ''} · on ${data.target ?? ''}</span>`,
        content: html`<div class="context">${data.detail === undefined ? '' : String(data.detail)}</div>`,
      };
    case 'run.paused':
      return {
        kind: 'pause',
        title: 'Paused for a question',
        content: html`<p class="question">${data.question ?? ''}</p><div class="meta">question <code>${data.question_id ?? ''}</code> · answer it in the <a href="/console/inbox">inbox</a></div>`,
      };
    case 'run.resumed':
      return { kind: 'pause', title: 'Answered; resumed', content: html`<div class="context">${data.answer ?? ''}</div>` };
    case 'run.completed':
      return { kind: 'end', title: 'Completed', content: html`${data.output !== undefined ? html`<div class="context">${String(data.output ?? '')}</div>` : ''}${usageLine(data.usage)}` };
    case 'run.failed':
      return { kind: 'failure', title: 'Failed', content: html`${json(data.error ?? data)}${usageLine(data.usage)}` };
    case 'run.cancelled':
      return { kind: 'failure', title: 'Cancelled', content: usageLine(data.usage) };
    case 'attempt.reset':
      return { kind: 'lifecycle', title: 'Model call retried', content: html`<div class="meta">attempt ${String(data.attempt ?? '')} of turn ${String(data.turn ?? '')}; its partial text was dropped</div>` };
    default:
      return undefined; // message.delta, and types this page does not know yet
  }
}

function childLink(childRunId: string | undefined): Html {
  return childRunId ? html`<div class="meta">subagent run: <a href="/console/runs/${childRunId}">${childRunId}</a></div>` : new Html('');
}

function usageLine(usage: unknown): Html {
  if (!usage || typeof usage !== 'object') return new Html('');
  const u = usage as Record<string, unknown>;
  const parts = [
    u.total_tokens !== undefined && u.total_tokens !== null ? `${String(u.total_tokens)} tokens` : undefined,
    u.cost_usd !== undefined && u.cost_usd !== null ? `$${String(u.cost_usd)}` : undefined,
    u.duration_ms !== undefined && u.duration_ms !== null ? `${String(u.duration_ms)} ms` : undefined,
  ].filter(Boolean);
  return parts.length ? html`<div class="meta">${parts.join(' · ')}</div>` : new Html('');
}
