import { Readable } from 'node:stream';
import { WorkflowNotFoundError } from '@temporalio/client';
import { finishExperiment } from '../../activities/evals/experiment-lifecycle.js';
import { startExperimentOrEndIt } from '../../activities/evals/start-experiment-workflow.js';
import { WorkNotStartedError } from '../../activities/start-recorded-work.js';
import { emitExperimentEnded } from '../../activities/webhooks/platform-events.js';
import { cellTotals, compareWithBaseline, leaderboard as rankVariants, type BaselineComparison } from '../../activities/evals/leaderboard.js';
import type { ScorerConfig } from '../../activities/evals/scorers/types.js';
import { expectedProblems } from '../../activities/evals/scorers/validate.js';
import { resolveVariants, type VariantSpec } from '../../activities/evals/variants.js';
import { listAllCases } from '../../db/eval-cases.js';
import { lockSuite } from '../../db/eval-suites.js';
import { cellMatrixJson, cellOutcomesJson, countCellsByStatus, insertCells, sumCellUsage, type CellCounts, type CellOutcome, type CellUsageSum, type NewCell } from '../../db/experiment-cells.js';
import { EXPERIMENT_TERMINAL_EVENTS, readExperimentEvents } from '../../db/experiment-events.js';
import {
  deleteExperimentById,
  findExperiment,
  findExperimentSnapshot,
  insertExperiment,
  isExperimentFinished,
  listExperimentsPage,
  saveExperimentSnapshot,
  updateExperiment,
} from '../../db/experiments.js';
import type { EvalCase, Experiment, ExperimentEvent, ExperimentStatus, StoredScorer } from '../../db/schema.js';
import { readAsTenant } from '../../db/tenant-reads.js';
import type { TenantScoped, TenantTx } from '../../db/tenant-transaction.js';
import {
  DEFAULT_EXPERIMENT_CONCURRENCY,
  MAX_EXPERIMENT_CONCURRENCY,
  setConcurrencySignal,
} from '../../workflows/experiment-api.js';
import { ApiError, invalidRequest, type FieldError } from '../errors.js';
import { assertRoomForCells } from '../experiment-cell-budget.js';
import type { FinishedCells, FinishedCellsCache } from '../finished-cells-cache.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { refOr404 } from '../ref-or-404.js';
import { deletionResult, listOf, MAX_REQUEST_INTEGER, pageQuery, refParams, serverSentEvent, timestamp } from '../schemas.js';
import { streamEventLog, type SharedLog } from '../sse.js';
import { credentialRecheck } from '../stream-credential.js';
import { holdStreamSlot } from '../stream-slots.js';
import { agentOr404, graphBodySchema } from './agents.js';
import { suiteOr404 } from './eval-suites.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'Evals';

/** Cells (cases × variants × repeats) one experiment may have. */
export const MAX_EXPERIMENT_CELLS = 20_000;
/**
 * Case data the cells of one experiment may copy in all, in characters of JSON: each cell copies its
 * case's input, expected value, metadata and scorers (so the experiment stands if the case changes), and
 * 20,000 cells of a 100,000-character input would be 2 GB written in one transaction.
 */
export const MAX_EXPERIMENT_CELL_CHARS = 200_000_000;
const MAX_VARIANTS = 20;
const MAX_REPEATS = 100;

const EXPERIMENT_STATUSES: ExperimentStatus[] = ['queued', 'running', 'completed', 'cancelled', 'failed'];
const nullableCount: JsonSchema = { type: ['integer', 'null'] };
const decimalOrNull: JsonSchema = { type: ['string', 'null'], description: 'Exact decimal USD; null when any part is unknown.' };

const variantSpecSchema: JsonSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    agent_version: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER, description: "A version number of the agent; default: its published version." },
    model: { type: 'string', minLength: 1, maxLength: 200, description: '`provider/model`, set on every node.' },
    prompt: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: { type: 'string', minLength: 1 }, version: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER } },
      description: 'A prompt (its current version, or `version`) set on every node.',
    },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    graph: { ...graphBodySchema, description: "A whole graph in place of the version's." },
  },
};

const countsSchema: JsonSchema = {
  type: 'object',
  required: ['pending', 'running', 'completed', 'failed', 'skipped'],
  properties: Object.fromEntries(['pending', 'running', 'completed', 'failed', 'skipped', 'total'].map((s) => [s, { type: 'integer' }])),
};

const experimentSchema: JsonSchema = {
  type: 'object',
  required: [
    'id', 'name', 'description', 'suite_id', 'suite_name', 'agent_id', 'variants', 'repeats', 'concurrency', 'primary_scorer',
    'baseline_experiment_id', 'status', 'error', 'case_count', 'cell_count', 'cells', 'usage', 'cost_usd', 'created_at', 'updated_at', 'started_at', 'ended_at',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    suite_id: { type: 'string' },
    suite_name: { type: 'string' },
    agent_id: { type: 'string' },
    variants: { type: 'array', items: { type: 'object' }, description: 'Each as given, with `agent_version` the version its runs execute.' },
    repeats: { type: 'integer' },
    concurrency: { type: 'integer' },
    primary_scorer: { type: ['string', 'null'], description: 'The scorer whose mean ranks the variants; null ranks by pass rate.' },
    baseline_experiment_id: { type: ['string', 'null'] },
    status: { enum: EXPERIMENT_STATUSES },
    error: { type: ['object', 'null'] },
    case_count: { type: 'integer' },
    cell_count: { type: 'integer' },
    cells: { ...countsSchema, description: 'Cells by status.' },
    usage: {
      type: 'object',
      required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
      properties: { prompt_tokens: nullableCount, completion_tokens: nullableCount, total_tokens: nullableCount },
    },
    cost_usd: { ...decimalOrNull, description: 'Runs and LLM judges of the finished cells, exact; null when any is unknown.' },
    created_at: timestamp,
    updated_at: timestamp,
    started_at: { type: ['string', 'null'], format: 'date-time' },
    ended_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const experimentBody: JsonSchema = { type: 'object', required: ['experiment'], additionalProperties: false, properties: { experiment: experimentSchema } };

function experimentJson(experiment: Experiment, counts: CellCounts | undefined, usage: CellUsageSum | undefined) {
  const cells = counts ?? { pending: 0, running: 0, completed: 0, failed: 0, skipped: 0 };
  return {
    id: experiment.id,
    name: experiment.name,
    description: experiment.description,
    suite_id: experiment.suite_id,
    suite_name: experiment.suite_name,
    agent_id: experiment.agent_id,
    variants: experiment.variants.map(({ resolved, ...spec }) => ({ ...spec, agent_version: resolved.version })),
    repeats: experiment.repeats,
    concurrency: experiment.concurrency,
    primary_scorer: experiment.primary_scorer,
    baseline_experiment_id: experiment.baseline_experiment_id,
    status: experiment.status,
    error: experiment.error,
    case_count: experiment.case_count,
    cell_count: experiment.cell_count,
    cells: { ...cells, total: experiment.cell_count },
    // No finished cell yet: nothing used.
    usage: usage ? { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens } : { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    cost_usd: usage ? usage.cost_usd : '0',
    created_at: isoTimestamp(experiment.created_at),
    updated_at: isoTimestamp(experiment.updated_at),
    started_at: isoTimestampOrNull(experiment.started_at),
    ended_at: isoTimestampOrNull(experiment.ended_at),
  };
}

/** The experiments as JSON, with their cell counts and sums read in two queries for the lot. */
async function experimentsJson(reader: TenantScoped, tenantId: string, experiments: Experiment[]) {
  const ids = experiments.map((e) => e.id);
  const counts = await countCellsByStatus(reader, tenantId, ids);
  const usage = await sumCellUsage(reader, tenantId, ids);
  return experiments.map((e) => experimentJson(e, counts.get(e.id), usage.get(e.id)));
}

const experimentOr404 = refOr404(findExperiment, 'experiment');

type CreateExperimentBody = {
  suite: string;
  agent?: string;
  name?: string;
  description?: string | null;
  variants: VariantSpec[];
  repeats?: number;
  concurrency?: number;
  baseline_experiment_id?: string;
  primary_scorer?: string;
};

export const createExperiment = defineOperation<Record<string, never>, unknown, CreateExperimentBody>({
  operationId: 'createEvalExperiment',
  method: 'post',
  path: '/v1/evals/experiments',
  tag: TAG,
  summary: "Run a suite's cases against 1–20 variants of its agent, as a durable workflow",
  description:
    'Everything is checked before anything starts: the suite (and that it has cases), every variant (its version, model, prompt version and graph ' +
    'resolve as a run would), the baseline and the primary scorer. Answers 201 with the experiment; its workflow runs the cells ' +
    '(cases × variants × repeats) at most `concurrency` at a time. Follow it with GET (leaderboard) or the events stream.',
  access: 'key',
  body: {
    type: 'object',
    required: ['suite', 'variants'],
    additionalProperties: false,
    properties: {
      suite: { type: 'string', minLength: 1, description: 'The suite, by id or name.' },
      agent: { type: 'string', minLength: 1, description: "The agent (id or name) whose suite a shared suite name means." },
      name: { type: 'string', minLength: 1, maxLength: 200 },
      description: { type: ['string', 'null'], maxLength: 10_000 },
      variants: { type: 'array', minItems: 1, maxItems: MAX_VARIANTS, items: variantSpecSchema },
      repeats: { type: 'integer', minimum: 1, maximum: MAX_REPEATS, default: 1 },
      concurrency: { type: 'integer', minimum: 1, maximum: MAX_EXPERIMENT_CONCURRENCY, default: DEFAULT_EXPERIMENT_CONCURRENCY },
      baseline_experiment_id: { type: 'string', minLength: 1, description: 'An earlier experiment of the suite to compare each variant against, case by case.' },
      primary_scorer: { type: 'string', minLength: 1, description: "Ranks the variants; default: the suite's first scorer." },
    },
  },
  errors: ['not_found', 'conflict', 'rate_limited', 'unavailable'],
  responses: { 201: { description: 'Created; its workflow has started', schema: experimentBody } },
  handler: async ({ body, caller, tenant, deps }) => {
    const created = await tenant(async (tx) => {
      const found = await suiteOr404(tx, caller.tenantId, body.suite, body.agent);
      const suite = (await lockSuite(tx, caller.tenantId, found.id))!;
      const cases = await listAllCases(tx, caller.tenantId, suite.id);
      const problems: FieldError[] = [];
      if (cases.length === 0) problems.push({ field: 'body.suite', message: `suite '${suite.name}' has no cases: add some first` });
      const repeats = body.repeats ?? 1;
      const cellCount = cases.length * body.variants.length * repeats;
      if (cellCount > MAX_EXPERIMENT_CELLS) {
        problems.push({ field: 'body.repeats', message: `cases × variants × repeats is ${cellCount}, above the ${MAX_EXPERIMENT_CELLS} cells an experiment may have` });
      }
      const copiedChars = cases.reduce((sum, c) => sum + caseCopyChars(c, suite.scorers), 0) * body.variants.length * repeats;
      if (copiedChars > MAX_EXPERIMENT_CELL_CHARS) {
        problems.push({ field: 'body.repeats', message: `the cells would copy ${copiedChars} characters of case data, above the ${MAX_EXPERIMENT_CELL_CHARS} an experiment may copy: fewer variants or repeats, or smaller cases` });
      }
      const resolved = await resolveVariants(tx, caller.tenantId, suite.agent_id, body.variants, 'body.variants');
      if ('problems' in resolved) problems.push(...resolved.problems);
      const scorerNames = new Set([suite.scorers, ...cases.map((c) => c.scorers ?? [])].flat().map(scorerName));
      // Default: the first scorer of the suite, or of the first case when the cases bring their own.
      const firstScorer = suite.scorers[0] ?? cases.find((c) => c.scorers?.length)?.scorers?.[0];
      const primaryScorer = body.primary_scorer ?? (firstScorer ? scorerName(firstScorer) : null);
      if (body.primary_scorer !== undefined && !scorerNames.has(body.primary_scorer)) {
        problems.push({ field: 'body.primary_scorer', message: `no scorer of the suite or its cases is named '${body.primary_scorer}'` });
      }
      if (body.baseline_experiment_id !== undefined) {
        const baseline = await findExperiment(tx, caller.tenantId, body.baseline_experiment_id);
        if (!baseline) problems.push({ field: 'body.baseline_experiment_id', message: `experiment '${body.baseline_experiment_id}' not found` });
        else if (baseline.suite_id !== suite.id) {
          problems.push({ field: 'body.baseline_experiment_id', message: `experiment '${baseline.id}' ran suite '${baseline.suite_name}', not this one: cases compare within a suite` });
        }
      }
      // The suite's scorers may have changed since its cases were added: each case's expected value must still suit them.
      for (const c of cases) {
        problems.push(...expectedProblems((c.scorers ?? suite.scorers) as ScorerConfig[], c.expected ?? null, `case ${c.id} expected`));
        if (problems.length >= 20) break;
      }
      if (problems.length > 0) throw invalidRequest(problems.map((p) => `${p.field}: ${p.message}`).join('; '), problems);
      if (!('variants' in resolved)) throw new Error('unreachable: variants resolved without problems');
      await assertRoomForCells(tx, caller.tenantId, body.concurrency ?? DEFAULT_EXPERIMENT_CONCURRENCY);

      const experiment = await insertExperiment(tx, caller.tenantId, {
        agentId: suite.agent_id,
        suiteId: suite.id,
        suiteName: suite.name,
        name: body.name ?? `${suite.name} ${new Date().toISOString()}`,
        description: body.description ?? null,
        variants: resolved.variants,
        repeats,
        concurrency: body.concurrency ?? DEFAULT_EXPERIMENT_CONCURRENCY,
        primaryScorer,
        baselineExperimentId: body.baseline_experiment_id ?? null,
        caseCount: cases.length,
        cellCount,
      });
      // Case by case, then variant, then repeat: a partial leaderboard compares the variants on the same cases.
      const cells: NewCell[] = [];
      for (const [caseIndex, c] of cases.entries()) {
        for (let variantIndex = 0; variantIndex < body.variants.length; variantIndex++) {
          for (let repeat = 0; repeat < repeats; repeat++) {
            const scorers: StoredScorer[] = c.scorers ?? suite.scorers;
            cells.push({ caseId: c.id, caseIndex, variantIndex, repeat, input: c.input, expected: c.expected, metadata: c.metadata, scorers });
          }
        }
      }
      await insertCells(tx, caller.tenantId, experiment.id, cells);
      return experiment;
    });

    await startExperimentOrEndIt(deps, created).catch((err: unknown) => {
      throw err instanceof WorkNotStartedError ? new ApiError('unavailable', err.message) : err;
    });
    const [json] = await tenant((tx) => experimentsJson(tx, caller.tenantId, [created]));
    return { status: 201, body: { experiment: json } };
  },
});

/** What one cell copies of its case (see MAX_EXPERIMENT_CELL_CHARS). */
function caseCopyChars(c: EvalCase, suiteScorers: StoredScorer[]): number {
  return c.input.length + JSON.stringify(c.expected ?? null).length + JSON.stringify(c.metadata ?? {}).length + JSON.stringify(c.scorers ?? suiteScorers).length;
}

function scorerName(scorer: StoredScorer): string {
  return scorer.name ?? scorer.type;
}

export const listExperiments = defineOperation<Record<string, never>, { suite?: string; agent?: string; status?: ExperimentStatus; limit: number; cursor?: string }>({
  operationId: 'listEvalExperiments',
  method: 'get',
  path: '/v1/evals/experiments',
  tag: TAG,
  summary: 'Experiments, oldest first; filter by `suite` (id or name), `agent` (id or name) and `status`',
  access: 'key',
  query: {
    ...pageQuery,
    properties: {
      ...(pageQuery.properties as object),
      suite: { type: 'string', minLength: 1 },
      agent: { type: 'string', minLength: 1 },
      status: { enum: EXPERIMENT_STATUSES },
    },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'A page of experiments', schema: listOf('experiments', experimentSchema) } },
  handler: async ({ query, caller, tenantReads }) => {
    const body = await tenantReads(async (reader) => {
      const agentId = query.agent === undefined ? undefined : (await agentOr404(reader, caller.tenantId, query.agent)).id;
      const suiteId = query.suite === undefined ? undefined : await suiteFilter(reader, caller.tenantId, query.suite, query.agent);
      const { items, nextCursor } = await listExperimentsPage(reader, caller.tenantId, { agentId, suiteId, status: query.status }, query);
      return { experiments: await experimentsJson(reader, caller.tenantId, items), next_cursor: nextCursor };
    });
    return { status: 200, body };
  },
});

/** The suite a `suite` filter names: a suite's id or name, or the id of a deleted suite (its experiments remain). */
async function suiteFilter(reader: TenantScoped, tenantId: string, ref: string, agentRef: string | undefined): Promise<string> {
  try {
    return (await suiteOr404(reader, tenantId, ref, agentRef)).id;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found' && ref.startsWith('sui_')) return ref;
    throw err;
  }
}

const leaderboardRowSchema: JsonSchema = {
  type: 'object',
  required: ['rank', 'variant', 'variant_index', 'cells', 'primary_score', 'pass_rate', 'scores', 'latency_ms', 'cost_usd', 'tokens'],
  properties: {
    rank: { type: 'integer' },
    variant: { type: 'string' },
    variant_index: { type: 'integer' },
    cells: countsSchema,
    primary_score: { type: ['number', 'null'] },
    pass_rate: { type: ['number', 'null'], description: 'Passed cells over finished (completed or failed) cells.' },
    scores: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['mean', 'n', 'ci95'],
        properties: { mean: { type: 'number' }, n: { type: 'integer' }, ci95: { type: ['array', 'null'], items: { type: 'number' } } },
      },
    },
    latency_ms: { type: 'object', properties: { p50: nullableCount, p95: nullableCount } },
    cost_usd: { type: 'object', properties: { total: decimalOrNull, mean: decimalOrNull } },
    tokens: { type: 'object', properties: { prompt: nullableCount, completion: nullableCount, total: nullableCount } },
    baseline: {
      type: 'object',
      required: ['experiment_id', 'baseline_variant', 'regressed', 'improved', 'unchanged'],
      properties: {
        experiment_id: { type: 'string' },
        baseline_variant: { type: 'string' },
        regressed: { type: 'array', items: { type: 'string' }, description: 'Case ids that scored lower than in the baseline.' },
        improved: { type: 'array', items: { type: 'string' } },
        unchanged: { type: 'integer' },
      },
    },
  },
};

const matrixCellSchema: JsonSchema = {
  type: 'object',
  required: ['cell_id', 'variant', 'repeat', 'status', 'run_id', 'output', 'scores', 'passed', 'latency_ms', 'usage', 'cost_usd', 'error', 'started_at', 'ended_at'],
  properties: {
    cell_id: { type: 'string' },
    variant: { type: 'string' },
    repeat: { type: 'integer' },
    status: { enum: ['pending', 'running', 'completed', 'failed', 'skipped'] },
    run_id: { type: ['string', 'null'] },
    output: { type: ['string', 'null'] },
    scores: { type: ['object', 'null'], description: 'Scorer name → {score, passed, reason}.' },
    passed: { type: ['boolean', 'null'] },
    latency_ms: nullableCount,
    usage: {
      type: 'object',
      required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
      properties: { prompt_tokens: nullableCount, completion_tokens: nullableCount, total_tokens: nullableCount },
      description: "The run's tokens plus any LLM judge's.",
    },
    cost_usd: decimalOrNull,
    error: { type: ['object', 'null'] },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    ended_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

export const getExperiment = defineOperation<{ id: string }, { results?: boolean }>({
  operationId: 'getEvalExperiment',
  method: 'get',
  path: '/v1/evals/experiments/{id}',
  tag: TAG,
  summary: 'An experiment with its leaderboard, computed from its cells (partial while it runs); `results=true` adds the case × variant matrix',
  access: 'key',
  params: refParams,
  query: { type: 'object', additionalProperties: false, properties: { results: { type: 'boolean', default: false } } },
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The experiment, its leaderboard and, when asked, its results',
      schema: {
        type: 'object',
        required: ['experiment', 'leaderboard'],
        additionalProperties: false,
        properties: {
          experiment: experimentSchema,
          leaderboard: { type: 'array', items: leaderboardRowSchema, description: 'Ranked by the primary score, then by mean cost.' },
          results: {
            type: 'array',
            description: 'One row per case, in suite order, each with its cells by variant and repeat.',
            items: {
              type: 'object',
              required: ['case_id', 'input', 'expected', 'cells'],
              properties: { case_id: { type: 'string' }, input: { type: 'string' }, expected: {}, cells: { type: 'array', items: matrixCellSchema } },
            },
          },
        },
      },
    },
  },
  // Not a tenant read: the first report of a finished experiment keeps its cells (keepFinishedCells).
  handler: async ({ params, query, caller, tenant, deps }) => {
    const { experiment, leaderboard, matrix } = await tenant(async (tx) =>
      experimentReport(tx, deps.finishedCells, await experimentOr404(tx, caller.tenantId, params.id), query.results === true),
    );
    if (matrix === undefined) return { status: 200, body: { experiment, leaderboard } };
    // The matrix (megabytes at thousands of cells) goes out as Postgres wrote it, never parsed, re-serialized
    // or even copied: the body is three buffers in a row.
    const parts = [Buffer.from(`{"experiment":${JSON.stringify(experiment)},"leaderboard":${JSON.stringify(leaderboard)},"results":`), matrix, Buffer.from('}')];
    const length = parts.reduce((sum, part) => sum + part.byteLength, 0);
    return { status: 200, body: Readable.from(parts), headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(length) } };
  },
});

/**
 * The experiment as JSON, its leaderboard and, when asked, its case × variant matrix (UTF-8 JSON): what
 * GET answers and the console's experiment page shows.
 */
export async function experimentReport(tx: TenantTx, cache: FinishedCellsCache, found: Experiment, withMatrix: boolean) {
  const cells = await readCells(tx, cache, found, withMatrix);
  // Kept with a finished experiment's cells: what it ranks by (variants, repeats, primary scorer) never changes.
  const { totals, ranking: rows } = (cells.summary ??= {
    totals: cellTotals(cells.outcomes),
    ranking: rankVariants({ variants: found.variants, repeats: found.repeats, primaryScorer: found.primary_scorer, cells: cells.outcomes }),
  });
  const json = experimentJson(found, totals.counts, totals.usage);
  const baseline = found.baseline_experiment_id ? await findExperiment(tx, found.tenant_id, found.baseline_experiment_id) : undefined;
  const baselineOutcomes = baseline ? (await readCells(tx, cache, baseline, false)).outcomes : [];
  const ranked = rows.map((row) => (baseline ? { ...row, baseline: baselineFor(row.variant, row.variant_index, cells.outcomes, baseline, baselineOutcomes, found.primary_scorer) } : row));
  return { experiment: json, leaderboard: ranked, matrix: withMatrix ? cells.matrix : undefined };
}

/** A running experiment's cells (the matrix only when asked for), or a finished one's, kept. */
type ExperimentCells = Omit<FinishedCells, 'matrix'> & { matrix?: Buffer };

/**
 * The cells: what the leaderboard reads, and the matrix (UTF-8 JSON) when asked for. Read fresh while the
 * experiment runs (so a running one shows its partial ranking). A finished one's cells are final: the
 * first read after its end keeps them in Postgres (for every API process) and in this process's memory,
 * and later reads reuse them.
 */
async function readCells(tx: TenantTx, cache: FinishedCellsCache, experiment: Experiment, withMatrix: boolean): Promise<ExperimentCells> {
  if (isExperimentFinished(experiment.status)) return cache.get(experiment.id) ?? (await keepFinishedCells(tx, cache, experiment));
  const outcomes = JSON.parse(await cellOutcomesJson(tx, experiment.tenant_id, experiment.id)) as CellOutcome[];
  if (!withMatrix) return { outcomes };
  return { outcomes, matrix: Buffer.from(await cellMatrixJson(tx, experiment.tenant_id, experiment.id, experiment.variants.map((v) => v.name))) };
}

async function keepFinishedCells(tx: TenantTx, cache: FinishedCellsCache, experiment: Experiment): Promise<FinishedCells> {
  const { tenant_id: tenantId, id } = experiment;
  const kept = await findExperimentSnapshot(tx, tenantId, id);
  let outcomes = kept?.outcomes_snapshot;
  let matrix = kept?.matrix_snapshot;
  if (!outcomes || !matrix) {
    outcomes = await cellOutcomesJson(tx, tenantId, id);
    matrix = await cellMatrixJson(tx, tenantId, id, experiment.variants.map((v) => v.name));
    await saveExperimentSnapshot(tx, tenantId, id, { outcomes, matrix });
  }
  const cells = { outcomes: JSON.parse(outcomes) as CellOutcome[], matrix: Buffer.from(matrix) };
  cache.set(id, cells, outcomes);
  return cells;
}

function baselineFor(
  variant: string,
  variantIndex: number,
  outcomes: CellOutcome[],
  baseline: Experiment,
  baselineOutcomes: CellOutcome[],
  primaryScorer: string | null,
): BaselineComparison {
  const sameName = baseline.variants.findIndex((v) => v.name === variant);
  const baselineIndex = sameName === -1 ? 0 : sameName;
  const mine = outcomes.filter((cell) => cell.variant_index === variantIndex);
  const theirs = baselineOutcomes.filter((cell) => cell.variant_index === baselineIndex);
  return { experiment_id: baseline.id, baseline_variant: baseline.variants[baselineIndex]!.name, ...compareWithBaseline(mine, theirs, primaryScorer) };
}

export const patchExperiment = defineOperation<{ id: string }, unknown, { name?: string; description?: string | null; concurrency?: number }>({
  operationId: 'updateEvalExperiment',
  method: 'patch',
  path: '/v1/evals/experiments/{id}',
  tag: TAG,
  summary: 'Rename or re-describe an experiment, or change its concurrency while it runs',
  description: 'A new `concurrency` reaches the running workflow at once (a signal): cells not yet started follow it.',
  access: 'key',
  params: refParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      description: { type: ['string', 'null'], maxLength: 10_000 },
      concurrency: { type: 'integer', minimum: 1, maximum: MAX_EXPERIMENT_CONCURRENCY },
    },
  },
  errors: ['not_found', 'conflict', 'rate_limited'],
  responses: { 200: { description: 'The updated experiment', schema: experimentBody } },
  handler: async ({ params, body, caller, tenant, deps }) => {
    const experiment = await tenant(async (tx) => {
      const current = await experimentOr404(tx, caller.tenantId, params.id);
      if (body.concurrency !== undefined && isExperimentFinished(current.status)) {
        throw new ApiError('conflict', `experiment '${current.id}' is ${current.status}: its concurrency no longer matters`);
      }
      // Lowering is always allowed; raising must fit beside the workspace's other experiments.
      if (body.concurrency !== undefined && body.concurrency > current.concurrency) await assertRoomForCells(tx, caller.tenantId, body.concurrency, current.id);
      return (await updateExperiment(tx, caller.tenantId, current.id, body))!;
    });
    if (body.concurrency !== undefined) {
      try {
        await deps.temporal.workflow.getHandle(experiment.id).signal(setConcurrencySignal, body.concurrency);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err; // it ended meanwhile: nothing left to pace
      }
    }
    const [json] = await tenant((tx) => experimentsJson(tx, caller.tenantId, [experiment]));
    return { status: 200, body: { experiment: json } };
  },
});

export const deleteExperiment = defineOperation<{ id: string }>({
  operationId: 'deleteEvalExperiment',
  method: 'delete',
  path: '/v1/evals/experiments/{id}',
  tag: TAG,
  summary: 'Cancel a queued or running experiment (202); delete a finished one with its results (200)',
  description:
    'While it is queued or running, DELETE cancels its workflow: cells not yet started become `skipped`, cells already running finish and count, ' +
    'then the status becomes `cancelled` (event `experiment.cancelled`). A finished experiment (completed, cancelled or failed) is deleted ' +
    'with its cells and events; the runs it made stay.',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: {
    202: { description: 'Cancelling: the experiment as it stands', schema: experimentBody },
    200: { description: 'Deleted', schema: deletionResult },
  },
  handler: async ({ params, caller, tenant, deps }) => {
    const experiment = await tenant((tx) => experimentOr404(tx, caller.tenantId, params.id));
    if (isExperimentFinished(experiment.status)) {
      await tenant((tx) => deleteExperimentById(tx, caller.tenantId, experiment.id));
      deps.finishedCells.delete(experiment.id);
      return { status: 200, body: { deleted: true, id: experiment.id } };
    }
    try {
      await deps.temporal.workflow.getHandle(experiment.id).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // No workflow to cancel: end the record here, as the workflow would have.
      const end = { tenantId: caller.tenantId, experimentId: experiment.id, status: 'cancelled' } as const;
      await finishExperiment(deps.db, end);
      // Best effort, as when a workflow cannot start: the record is final, and a retried DELETE finds it ended.
      await emitExperimentEnded(deps, end).catch((emitErr) => console.error('[webhooks] experiment.cancelled not emitted:', emitErr));
    }
    const current = await tenant((tx) => experimentOr404(tx, caller.tenantId, experiment.id));
    const [json] = await tenant((tx) => experimentsJson(tx, caller.tenantId, [current]));
    return { status: 202, body: { experiment: json } };
  },
});

export const streamExperimentEvents = defineOperation<{ id: string }, { after?: number }>({
  operationId: 'streamEvalExperimentEvents',
  method: 'get',
  path: '/v1/evals/experiments/{id}/events',
  tag: TAG,
  summary: "Stream an experiment's progress, resuming after Last-Event-ID",
  description:
    'Server-Sent Events, as a run\'s stream: `experiment.started`, `cell.started`, `cell.completed` / `cell.failed` (with scores), and one of ' +
    '`experiment.completed`, `experiment.cancelled`, `experiment.failed`, after which the stream ends. Each frame has `id: <seq>`; reconnect with ' +
    '`Last-Event-ID` (or `?after=`) to get exactly the rest.',
  access: 'key',
  params: refParams,
  query: { type: 'object', additionalProperties: false, properties: { after: { type: 'integer', minimum: 0, maximum: MAX_REQUEST_INTEGER } } },
  errors: ['not_found', 'rate_limited'],
  responses: { 200: { description: 'Server-Sent Events', contentType: 'text/event-stream', schema: serverSentEvent } },
  handler: async ({ params, query, caller, tenantReads, deps, koa }) => {
    holdStreamSlot(koa, caller);
    const experiment = await tenantReads((reader) => experimentOr404(reader, caller.tenantId, params.id));
    const lastEventId = koa.get('Last-Event-ID');
    const after = /^\d{1,9}$/.test(lastEventId) ? Number(lastEventId) : (query.after ?? 0);
    const log: SharedLog<ExperimentEvent> = {
      hub: deps.experimentEvents,
      tenantId: caller.tenantId,
      id: experiment.id,
      read: (afterSeq, limit) => readExperimentEvents(deps.db, caller.tenantId, experiment.id, afterSeq, limit),
      endsAfter: (event) => EXPERIMENT_TERMINAL_EVENTS.has(event.type),
      isOver: async () => {
        const current = await readAsTenant(deps.db, caller.tenantId, (reader) => findExperiment(reader, caller.tenantId, experiment.id));
        return current === undefined || isExperimentFinished(current.status);
      },
    };
    return streamEventLog(koa, after, log, { access: credentialRecheck(koa, deps, caller) });
  },
});

export default [createExperiment, listExperiments, getExperiment, patchExperiment, deleteExperiment, streamExperimentEvents];
