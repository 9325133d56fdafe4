import { findExperiment, isExperimentFinished } from '../../db/experiments.js';
import { answerPage } from '../oauth/authorize-endpoint.js';
import type { Experiment } from '../../db/schema.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { AppDeps } from '../deps.js';
import { Html, html } from '../oauth/html.js';
import { experimentReport } from '../routes/experiments.js';
import { consolePage, messagePage, time } from './layout.js';
import { streamSnapshots } from './live.js';
import { SharedSnapshots } from './shared-snapshot.js';
import { answerText, currentWorkspaces, findInWorkspaces, sendStream, type SignedInRequest } from './request.js';

/**
 * /console/experiments/{id}: the experiment's leaderboard and its case × variant matrix as a heat map
 * (each cell coloured by its primary score), both as GET /v1/evals/experiments/{id}?results=true computes
 * them, and recomputed on each of the experiment's events while it runs.
 */

type Report = Awaited<ReturnType<typeof experimentReport>>;

interface MatrixCell {
  cell_id: string;
  variant: string;
  repeat: number;
  status: string;
  run_id: string | null;
  output: string | null;
  scores: Record<string, { score?: number; passed?: boolean; reason?: string }> | null;
  passed: boolean | null;
}

interface MatrixRow {
  case_id: string;
  input: string;
  cells: MatrixCell[];
}

export async function showExperiment(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const id = ctx.params.id!;
  const found = await findInWorkspaces(deps.db, person, id, (db, tenantId) => readAsTenant(db, tenantId, (reader) => findExperiment(reader, tenantId, id)));
  if (!found) return answerPage(ctx, 404, messagePage(request.signedIn(), 'Experiment not found', `There is no experiment ${id} in your workspaces.`));
  const live = await renderLive(deps, found.row);
  const body = html`<h1>Experiment <code>${found.row.id}</code></h1>
<p class="meta">${found.workspace.name} · suite ${found.row.suite_name} · created ${time(found.row.created_at)}</p>
<div id="experiment-live"${live.final ? '' : html` data-events="/console/experiments/${found.row.id}/events"`}>${live.html}</div>`;
  answerPage(ctx, 200, consolePage(request.signedIn(), `Experiment ${found.row.name}`, body));
}

/** The page's live feed: `{html, final}` each time the leaderboard or matrix changes, until the experiment ends. */
export async function streamExperiment(request: SignedInRequest): Promise<void> {
  const { ctx, deps, person } = request;
  const id = ctx.params.id!;
  const found = await findInWorkspaces(deps.db, person, id, (db, tenantId) => readAsTenant(db, tenantId, (reader) => findExperiment(reader, tenantId, id)));
  if (!found) return answerText(ctx, 404, `There is no experiment ${id} in your workspaces.`);
  const tenantId = found.workspace.id;
  let sent: string | undefined;
  const reply = streamSnapshots(ctx, {
    subscribe: (wake) => deps.experimentEvents.subscribe(id, wake),
    // Each recomputation reads the whole report: a busy experiment is looked at about once a second.
    gatherMs: 1000,
    next: async (since) => {
      // Signed out, or no longer a member of the workspace: the stream ends.
      if (!(await currentWorkspaces(request, tenantId))) return { final: true };
      // The report is the same for every viewer of the experiment: computed once for those that woke together.
      const live = await liveReports.get(`${tenantId}\u0000${id}`, since, async () => {
        const experiment = await readAsTenant(deps.db, tenantId, (reader) => findExperiment(reader, tenantId, id));
        return experiment && renderLive(deps, experiment);
      });
      if (!live) return { data: { html: '<p class="empty">This experiment was deleted.</p>', final: true }, final: true };
      if (live.html.text === sent && !live.final) return {};
      sent = live.html.text;
      return { data: { html: live.html.text, final: live.final }, final: live.final };
    },
  });
  sendStream(ctx, reply);
}

const liveReports = new SharedSnapshots<{ html: Html; final: boolean } | undefined>();

async function renderLive(deps: AppDeps, experiment: Experiment): Promise<{ html: Html; final: boolean }> {
  const report = await withTenant(deps.db, experiment.tenant_id, (tx) => experimentReport(tx, deps.finishedCells, experiment, true));
  const matrix = JSON.parse(report.matrix!.toString('utf8')) as MatrixRow[];
  const primary = report.experiment.primary_scorer;
  return {
    final: isExperimentFinished(experiment.status),
    html: html`${summary(report)}
<h2>Leaderboard</h2>
${leaderboardTable(report)}
<h2>Cases × variants</h2>
<p class="meta">Each cell is coloured by its ${primary ? html`<code>${primary}</code> score` : 'pass or fail'}, from red (0) to green (1).
<span class="legend heat">${Array.from({ length: 11 }, (_, i) => html`<span class="s${String(i)}">${(i / 10).toFixed(1)}</span>`)}</span></p>
${heatMap(matrix, report, primary)}`,
  };
}

function summary(report: Report): Html {
  const e = report.experiment;
  const c = e.cells;
  return html`<div class="card"><strong>${e.name}</strong> <span class="badge ${e.status}" id="experiment-status">${e.status}</span>
<div class="meta" id="experiment-progress">${String(c.completed + c.failed + c.skipped)} of ${String(c.total)} cells done · ${String(c.running)} running · ${String(c.failed)} failed · ${String(c.skipped)} skipped · cost ${e.cost_usd === null ? 'unknown' : `$${e.cost_usd}`}</div>
${e.error ? html`<p class="error">${JSON.stringify(e.error)}</p>` : ''}</div>`;
}

function leaderboardTable(report: Report): Html {
  const scorers = [...new Set(report.leaderboard.flatMap((row) => Object.keys(row.scores)))].sort();
  return html`<table id="leaderboard">
<thead><tr><th>Rank</th><th>Variant</th><th>Primary score</th><th>Pass rate</th>${scorers.map((s) => html`<th>${s}</th>`)}<th>Cells done</th><th>p50 latency</th><th>Cost</th><th>Tokens</th></tr></thead>
<tbody>
${report.leaderboard.map(
  (row) => html`<tr data-variant="${row.variant}"><td class="num">${String(row.rank)}</td><td>${row.variant}</td><td class="num">${score(row.primary_score)}</td><td class="num">${percent(row.pass_rate)}</td>
${scorers.map((s) => html`<td class="num">${row.scores[s] ? `${score(row.scores[s].mean)} (n=${row.scores[s].n})` : '–'}</td>`)}
<td class="num">${String(row.cells.completed + row.cells.failed)} / ${String(row.cells.total)}</td><td class="num">${row.latency_ms.p50 === null ? '–' : `${row.latency_ms.p50} ms`}</td>
<td class="num">${row.cost_usd.total === null ? 'unknown' : `$${row.cost_usd.total}`}</td><td class="num">${row.tokens.total === null ? '–' : String(row.tokens.total)}</td></tr>
`,
)}</tbody></table>`;
}

function heatMap(matrix: MatrixRow[], report: Report, primary: string | null): Html {
  const repeats = report.experiment.repeats;
  const variants = (report.experiment.variants as { name: string }[]).map((v) => v.name);
  const columns = variants.flatMap((variant) => Array.from({ length: repeats }, (_, repeat) => ({ variant, repeat })));
  return html`<table id="heatmap" class="heat">
<thead><tr><th>Case</th>${columns.map((c) => html`<th>${c.variant}${repeats > 1 ? ` #${c.repeat + 1}` : ''}</th>`)}</tr></thead>
<tbody>
${matrix.map(
  (row) => html`<tr data-case="${row.case_id}"><td title="${row.input}">${row.input.length > 80 ? `${row.input.slice(0, 80)}…` : row.input}</td>
${columns.map((column) => heatCell(row.cells.find((cell) => cell.variant === column.variant && cell.repeat === column.repeat), primary))}</tr>
`,
)}</tbody></table>`;
}

/** A cell's colour class from its primary score (or pass/fail when the experiment ranks by pass rate). */
function heatCell(cell: MatrixCell | undefined, primary: string | null): Html {
  if (!cell) return html`<td class="cell pending">–</td>`;
  if (cell.status !== 'completed') {
    const label = cell.status === 'failed' ? '✕' : cell.status === 'running' ? '…' : '·';
    return html`<td class="cell ${cell.status}" data-status="${cell.status}" title="${cell.status}">${cellLink(cell, label)}</td>`;
  }
  const value = primary ? cell.scores?.[primary]?.score : cell.passed === null ? undefined : cell.passed ? 1 : 0;
  if (typeof value !== 'number') return html`<td class="cell skipped" data-status="completed" title="no score">${cellLink(cell, '?')}</td>`;
  const bucket = Math.max(0, Math.min(10, Math.round(value * 10)));
  const title = `${primary ?? 'passed'}: ${value}${cell.output ? `\n${cell.output.slice(0, 300)}` : ''}`;
  return html`<td class="cell s${String(bucket)}" data-status="completed" data-score="${String(value)}" title="${title}">${cellLink(cell, score(value))}</td>`;
}

function cellLink(cell: MatrixCell, label: string): Html {
  return cell.run_id ? html`<a href="/console/runs/${cell.run_id}">${label}</a>` : html`${label}`;
}

function score(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : String(Math.round(value * 100) / 100);
}

function percent(value: number | null): string {
  return value === null ? '–' : `${Math.round(value * 100)}%`;
}
