import type { RunError } from '../../db/schema.js';
import { frame, type LoggedEvent } from '../sse.js';

/**
 * What a publishable key's caller (a website's visitor) sees of a run's events: the run's own events,
 * the reply's text and the question, never the tool calls, their arguments and results, or what a
 * guardrail found (a failure shows its code only, with a fixed sentence). Events it does not see are left out of the stream (an empty frame); the `id`s of
 * the rest are the log's, so Last-Event-ID resumes as for any caller.
 */
export function visitorFrame(visitorToken?: string): (event: LoggedEvent) => string {
  return (event) => {
    const data = visibleData(event);
    if (!data) return '';
    // Handed out once, in the stream that started the thread: never stored in the log.
    if (visitorToken && event.type === 'run.created') data.visitor_token = visitorToken;
    return frame({ ...event, data });
  };
}

/**
 * What a visitor sees of a run's record: the conversation's end, not the prompts, skills and guardrail
 * trips behind it, a failure's own words, nor its token counts and cost.
 */
export function visitorRun<Run extends { error: RunError | null; usage: unknown }>(run: Run): Run {
  return { ...run, error: visitorError(run.error), usage: visitorUsage(run.usage), prompts: [], skills: [], guardrail_trips: [] };
}

/**
 * Token counts and cost are the workspace's business (what its provider charges, how long its prompts
 * are): a visitor gets them as unknown (null), and the run's duration as it is.
 */
function visitorUsage(usage: unknown): unknown {
  if (typeof usage !== 'object' || usage === null) return usage;
  const { duration_ms } = usage as { duration_ms?: unknown };
  return { prompt_tokens: null, completion_tokens: null, total_tokens: null, cost_usd: null, duration_ms: duration_ms ?? null };
}

/**
 * A failure's code with a fixed sentence: its own message can quote what a guardrail matched (its
 * keywords, scores and thresholds, for a visitor to tune an input against) or the provider's setup.
 */
function visitorError(error: RunError | null | undefined): RunError | null {
  if (!error) return null;
  return { code: error.code, message: error.code === 'guardrail_blocked' ? 'the message was blocked by the assistant’s safety rules' : 'the assistant could not answer' };
}

function withVisitorUsage(data: Record<string, unknown>): Record<string, unknown> {
  return 'usage' in data ? { ...data, usage: visitorUsage(data.usage) } : data;
}

function visibleData(event: LoggedEvent): Record<string, unknown> | undefined {
  if (event.type === 'run.failed') return withVisitorUsage({ ...event.data, error: visitorError(event.data.error as RunError | undefined) });
  if (event.type.startsWith('run.')) return withVisitorUsage({ ...event.data });
  if (event.type === 'message.delta' || event.type === 'attempt.reset') return { ...event.data };
  if (event.type === 'message.completed') {
    // Its tool_calls are the tool arguments; usage is the workspace's business.
    const { turn, text, finish_reason } = event.data;
    return { turn, text, finish_reason };
  }
  return undefined;
}
