import type { Db } from '../../db/database.js';
import { answerPage } from '../oauth/authorize-endpoint.js';
import { findAgent } from '../../db/agents.js';
import { readRunEvents } from '../../db/run-events.js';
import { findChildRun, findRun, listRunsPage } from '../../db/runs.js';
import type { Run } from '../../db/schema.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import { html } from '../oauth/html.js';
import { runLog, streamEventLog } from '../sse.js';
import { consolePage, messagePage, time } from './layout.js';
import { answerText, currentWorkspaces, findInWorkspaces, sendStream, type SignedInRequest } from './request.js';
import { timelineEntry, type ChildRuns } from './run-timeline.js';

/**
 * /console/runs/{id}: a run's header and its trace as a timeline, followed live from the run's event
 * log (the stream of GET /v1/runs/{id}/events, with each event rendered as a list item). A run outside
 * the person's workspaces is a 404 page.
 */

/** Events a page renders at once; longer logs show their start and follow the rest from the stream. */
const EVENTS_PER_PAGE = 2000;
const CHILDREN_SHOWN = 100;
/** How often a run's stream checks that the person may still see it. */
const ACCESS_CHECK_MS = 1000;

export async function showRun(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const runId = ctx.params.id!;
  const found = await findInWorkspaces(deps.db, person, runId, (db, tenantId) => readAsTenant(db, tenantId, (reader) => findRun(reader, tenantId, runId)));
  if (!found) return answerPage(ctx, 404, messagePage(request.signedIn(), 'Run not found', `There is no run ${runId} in your workspaces.`));
  const { workspace, row: run } = found;
  const tenantId = workspace.id;
  const { agentName, children } = await readAsTenant(deps.db, tenantId, async (reader) => ({
    agentName: (await findAgent(reader, tenantId, run.agent_id))?.name,
    children: (await listRunsPage(reader, tenantId, { parentRunId: run.id, source: 'all' }, { limit: CHILDREN_SHOWN })).items,
  }));
  const events = await readRunEvents(deps.db, tenantId, run.id, 0, EVENTS_PER_PAGE);
  // The subagent runs just read name the tool calls' children; only a run with more of them looks further.
  const byStep = new Map(children.map((child) => [child.parent_step, child.id]));
  const lookUp = children.length === CHILDREN_SHOWN ? childRuns(deps.db, tenantId, run.id) : async () => undefined;
  const childRun: ChildRuns = async (step) => byStep.get(step) ?? (await lookUp(step));
  const entries = [];
  for (const event of events) entries.push(await timelineEntry(event, childRun));
  const lastSeq = events.at(-1)?.seq ?? 0;
  const ended = entries.some((entry) => entry.final);
  const body = html`<h1>Run <code>${run.id}</code> <span id="run-status" class="badge ${run.status}">${run.status}</span></h1>
${runSummary(run, agentName, workspace.name)}
${children.length ? html`<h2>Subagent runs</h2><ul>${children.map((child) => html`<li><a href="/console/runs/${child.id}">${child.id}</a> <span class="badge ${child.status}">${child.status}</span> <span class="meta">step ${String(child.parent_step ?? '')}</span></li>`)}</ul>` : ''}
<h2>Timeline</h2>
<ol id="timeline" class="timeline"${ended ? '' : html` data-events="/console/runs/${run.id}/events?after=${String(lastSeq)}"`}>
${entries.map((entry) => entry.html ?? '')}
</ol>`;
  answerPage(ctx, 200, consolePage(request.signedIn(), `Run ${run.id}`, body));
}

/** The page's live feed: the run's event stream, each frame `{type, html, status, final}`. */
export async function streamRun(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const runId = ctx.params.id!;
  const found = await findInWorkspaces(deps.db, person, runId, (db, tenantId) => readAsTenant(db, tenantId, (reader) => findRun(reader, tenantId, runId)));
  if (!found) return answerText(ctx, 404, `There is no run ${runId} in your workspaces.`);
  const tenantId = found.workspace.id;
  const lastEventId = ctx.get('Last-Event-ID');
  const queried = typeof ctx.query.after === 'string' && /^\d{1,9}$/.test(ctx.query.after) ? Number(ctx.query.after) : 0;
  const after = /^\d{1,9}$/.test(lastEventId) ? Number(lastEventId) : queried;
  const childRun = childRuns(deps.db, tenantId, runId);
  // The stream of GET /v1/runs/{id}/events, plus the console's access: the session and the membership
  // are checked again (once a second); when either is gone it ends.
  const reply = streamEventLog(ctx, after, runLog(deps, tenantId, runId), {
    access: { everyMs: ACCESS_CHECK_MS, stands: async () => Boolean(await currentWorkspaces(request, tenantId)) },
    frame: async (event) => {
      const entry = await timelineEntry(event, childRun);
      // Events the timeline does not show (text deltas) are not sent at all.
      if (!entry.html && !entry.status && !entry.final) return '';
      const data = { type: event.type, html: entry.html?.text ?? '', status: entry.status, final: entry.final };
      // `retry`: a stream that ends at a pause is picked up again a second later, from Last-Event-ID.
      return `retry: 1000\nid: ${event.seq}\ndata: ${JSON.stringify(data)}\n\n`;
    },
  });
  sendStream(ctx, reply);
}

function childRuns(db: Db, tenantId: string, runId: string): ChildRuns {
  return async (step) => (await readAsTenant(db, tenantId, (reader) => findChildRun(reader, tenantId, runId, step)))?.id;
}

function runSummary(run: Run, agentName: string | undefined, workspaceName: string) {
  return html`<div class="card">
<div class="meta">agent <strong>${agentName ?? run.agent_id}</strong> v${String(run.version)} · ${workspaceName} · source ${run.source} · created ${time(run.created_at)}${run.ended_at ? html` · ended ${time(run.ended_at)}` : ''}</div>
${run.parent_run_id ? html`<div class="meta">subagent of <a href="/console/runs/${run.parent_run_id}">${run.parent_run_id}</a></div>` : ''}
<div class="meta">input</div><div class="context">${run.input}</div>
${run.output !== null ? html`<div class="meta">output</div><div class="context">${run.output}</div>` : ''}
${run.pending_question ? html`<p>Waiting for an answer: <strong>${run.pending_question.question}</strong> — <a href="/console/inbox">answer it in the inbox</a></p>` : ''}
</div>`;
}
