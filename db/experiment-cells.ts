import { sql } from 'kysely';
import { newId } from './ids.js';
import { insertBatches } from './insert-batches.js';
import type { CellScore, CellStatus, ExperimentCell, RunError, StoredScorer } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `experiment_cells` table: one row per case × variant × repeat, written when the experiment is
 * created and filled in as its cell runs. Every transition is conditional on the cell's current status,
 * so a retried activity or a replayed workflow never moves a cell twice.
 */

const CELL_COLUMNS = [
  'id', 'tenant_id', 'experiment_id', 'seq', 'case_id', 'case_index', 'variant_index', 'repeat', 'input', 'expected', 'metadata', 'scorers',
  'status', 'run_id', 'output', 'scores', 'passed', 'latency_ms', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'error', 'started_at', 'ended_at',
] as const;

export interface NewCell {
  caseId: string;
  caseIndex: number;
  variantIndex: number;
  repeat: number;
  input: string;
  expected: unknown;
  metadata: Record<string, unknown>;
  scorers: StoredScorer[];
}

/** Inserts the cells numbered in the order given (seq 1, 2, …), the order they are started in. */
export async function insertCells(tx: TenantTx, tenantId: string, experimentId: string, cells: NewCell[]): Promise<void> {
  const rows = cells.map((cell, i) => ({
    id: newId('cell'),
    tenant_id: tenantId,
    experiment_id: experimentId,
    seq: i + 1,
    case_id: cell.caseId,
    case_index: cell.caseIndex,
    variant_index: cell.variantIndex,
    repeat: cell.repeat,
    input: cell.input,
    expected: cell.expected === null || cell.expected === undefined ? null : JSON.stringify(cell.expected),
    metadata: JSON.stringify(cell.metadata),
    scorers: JSON.stringify(cell.scorers),
    status: 'pending' as const,
    run_id: null,
    output: null,
    scores: null,
    passed: null,
    latency_ms: null,
    prompt_tokens: null,
    completion_tokens: null,
    total_tokens: null,
    cost_usd: null,
    error: null,
    started_at: null,
    ended_at: null,
  }));
  for (const batch of insertBatches(rows)) await tx.insertInto('experiment_cells').values(batch).execute();
}

export interface PendingCell {
  id: string;
  seq: number;
}

/** The next pending cells after `afterSeq`, in order: what the experiment workflow starts next. */
export async function listPendingCells(tx: TenantTx, tenantId: string, experimentId: string, afterSeq: number, limit: number): Promise<PendingCell[]> {
  return tx
    .selectFrom('experiment_cells')
    .select(['id', 'seq'])
    .where('tenant_id', '=', tenantId)
    .where('experiment_id', '=', experimentId)
    .where('status', '=', 'pending')
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

export async function findCell(tx: TenantTx, tenantId: string, cellId: string): Promise<ExperimentCell | undefined> {
  return tx.selectFrom('experiment_cells').select([...CELL_COLUMNS, sql<string | null>`cost_usd::text`.as('cost_usd')]).where('id', '=', cellId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** The cell, locked: its run is created once however often the activity creating it is retried. */
export async function lockCell(tx: TenantTx, tenantId: string, cellId: string): Promise<ExperimentCell | undefined> {
  return tx.selectFrom('experiment_cells').selectAll().where('id', '=', cellId).where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
}

/** pending → running, with the run it started. */
export async function markCellRunning(tx: TenantTx, tenantId: string, cellId: string, runId: string): Promise<void> {
  await tx
    .updateTable('experiment_cells')
    .set({ status: 'running', run_id: runId, started_at: new Date() })
    .where('id', '=', cellId)
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'pending')
    .execute();
}

export interface CellResult {
  status: 'completed' | 'failed';
  output: string | null;
  scores: Record<string, CellScore> | null;
  passed: boolean;
  latencyMs: number | null;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null };
  costUsd: string | null;
  error: RunError | null;
}

/** running (or pending, when it failed before its run) → completed or failed; answers false when it had already ended. */
export async function recordCellResult(tx: TenantTx, tenantId: string, cellId: string, result: CellResult): Promise<boolean> {
  const row = await tx
    .updateTable('experiment_cells')
    .set({
      status: result.status,
      output: result.output,
      scores: result.scores ? JSON.stringify(result.scores) : null,
      passed: result.passed,
      latency_ms: result.latencyMs,
      prompt_tokens: result.usage.prompt_tokens,
      completion_tokens: result.usage.completion_tokens,
      total_tokens: result.usage.total_tokens,
      cost_usd: result.costUsd,
      error: result.error ? JSON.stringify(result.error) : null,
      ended_at: new Date(),
    })
    .where('id', '=', cellId)
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', ['pending', 'running'])
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Every pending cell becomes skipped (a cancelled experiment); answers how many. */
export async function skipPendingCells(tx: TenantTx, tenantId: string, experimentId: string): Promise<number> {
  const rows = await tx
    .updateTable('experiment_cells')
    .set({ status: 'skipped', ended_at: new Date() })
    .where('tenant_id', '=', tenantId)
    .where('experiment_id', '=', experimentId)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  return rows.length;
}

export type CellCounts = Record<CellStatus, number>;

/** How many of the experiment's cells are in each status. */
export async function countCellsByStatus(reader: TenantScoped, tenantId: string, experimentIds: string[]): Promise<Map<string, CellCounts>> {
  const counts = new Map<string, CellCounts>(experimentIds.map((id) => [id, { pending: 0, running: 0, completed: 0, failed: 0, skipped: 0 }]));
  if (experimentIds.length === 0) return counts;
  const rows = await reader
    .selectFrom('experiment_cells')
    .select(['experiment_id', 'status', sql<number>`count(*)::int`.as('n')])
    .where('tenant_id', '=', tenantId)
    .where('experiment_id', 'in', experimentIds)
    .groupBy(['experiment_id', 'status'])
    .execute();
  for (const row of rows) counts.get(row.experiment_id)![row.status] = row.n;
  return counts;
}

/** Usage and exact cost summed over the experiment's finished cells; cost null when any finished cell's is unknown. */
export async function sumCellUsage(reader: TenantScoped, tenantId: string, experimentIds: string[]) {
  if (experimentIds.length === 0) return new Map<string, CellUsageSum>();
  const rows = await reader
    .selectFrom('experiment_cells')
    .select([
      'experiment_id',
      // Null when any finished cell's count is unknown, as on the leaderboard; float8, exact far past int4's range.
      sql<number | null>`case when bool_or(prompt_tokens is null) then null else sum(prompt_tokens)::float8 end`.as('prompt_tokens'),
      sql<number | null>`case when bool_or(completion_tokens is null) then null else sum(completion_tokens)::float8 end`.as('completion_tokens'),
      sql<number | null>`case when bool_or(total_tokens is null) then null else sum(total_tokens)::float8 end`.as('total_tokens'),
      sql<string | null>`case when bool_or(cost_usd is null) then null else coalesce(sum(cost_usd), 0)::text end`.as('cost_usd'),
    ])
    .where('tenant_id', '=', tenantId)
    .where('experiment_id', 'in', experimentIds)
    .where('status', 'in', ['completed', 'failed'])
    .groupBy('experiment_id')
    .execute();
  return new Map<string, CellUsageSum>(rows.map((row) => [row.experiment_id, row]));
}

export interface CellUsageSum {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_usd: string | null;
}

/**
 * What the leaderboard reads of each cell, in order: no outputs. Built as one JSON document by Postgres:
 * decoding thousands of rows field by field costs far more than parsing one text (PGlite most of all).
 */
export async function cellOutcomesJson(reader: TenantScoped, tenantId: string, experimentId: string): Promise<string> {
  const { cells } = await sql<{ cells: string }>`
    select coalesce(json_agg(json_build_object(
      'case_id', case_id, 'variant_index', variant_index, 'status', status, 'scores', scores, 'passed', passed,
      'latency_ms', latency_ms, 'prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens,
      'total_tokens', total_tokens, 'cost_usd', cost_usd::text) order by seq), '[]')::text as cells
    from experiment_cells where tenant_id = ${tenantId} and experiment_id = ${experimentId}`
    .execute(reader)
    .then((result) => result.rows[0]!);
  return cells;
}

/** A cell as the leaderboard reads it. */
export type CellOutcome = Pick<
  ExperimentCell,
  'case_id' | 'variant_index' | 'status' | 'scores' | 'passed' | 'latency_ms' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'cost_usd'
>;

/** A timestamp as the API writes it (`toISOString()`), from SQL. */
const isoTime = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * The results matrix as the API answers it, as JSON text: a row per case in suite order, each with its
 * cells by variant (named from `variantNames`) and repeat. One JSON document from Postgres, as above.
 */
export async function cellMatrixJson(reader: TenantScoped, tenantId: string, experimentId: string, variantNames: string[]): Promise<string> {
  const { matrix } = await sql<{ matrix: string }>`
    select coalesce(json_agg(json_build_object('case_id', case_id, 'input', input, 'expected', expected, 'cells', cells) order by case_index), '[]')::text as matrix
    from (
      select case_id, case_index, min(input) as input, (array_agg(expected))[1] as expected,
        json_agg(json_build_object(
          'cell_id', id, 'variant', ${JSON.stringify(variantNames)}::jsonb ->> variant_index, 'repeat', repeat, 'status', status,
          'run_id', run_id, 'output', output, 'scores', scores, 'passed', passed, 'latency_ms', latency_ms,
          'usage', json_build_object('prompt_tokens', prompt_tokens, 'completion_tokens', completion_tokens, 'total_tokens', total_tokens),
          'cost_usd', cost_usd::text, 'error', error, 'started_at', ${isoTime('started_at')}, 'ended_at', ${isoTime('ended_at')}
        ) order by variant_index, repeat) as cells
      from experiment_cells where tenant_id = ${tenantId} and experiment_id = ${experimentId}
      group by case_id, case_index
    ) per_case`
    .execute(reader)
    .then((result) => result.rows[0]!);
  return matrix;
}
