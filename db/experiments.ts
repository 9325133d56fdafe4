import { sql } from 'kysely';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { strandedPage, type StrandedQuery } from './stranded-query.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Experiment, ExperimentStatus, RunError, StoredVariant } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `experiments` table: what an experiment compares and where it stands. Its cells (db/experiment-cells.ts)
 * hold the results; its `last_event_seq` is advanced by db/experiment-events.ts.
 */

/** Every column but the snapshots, which only the read of a finished experiment's results wants. */
const EXPERIMENT_COLUMNS = [
  'id', 'tenant_id', 'agent_id', 'suite_id', 'suite_name', 'name', 'description', 'variants', 'repeats', 'concurrency', 'primary_scorer',
  'baseline_experiment_id', 'status', 'error', 'case_count', 'cell_count', 'last_event_seq', 'created_at', 'updated_at', 'started_at', 'ended_at',
] as const;

export const EXPERIMENT_TERMINAL_STATUSES = ['completed', 'cancelled', 'failed'] as const satisfies readonly ExperimentStatus[];

export function isExperimentFinished(status: ExperimentStatus): boolean {
  return (EXPERIMENT_TERMINAL_STATUSES as readonly ExperimentStatus[]).includes(status);
}

export interface NewExperiment {
  agentId: string;
  suiteId: string;
  suiteName: string;
  name: string;
  description: string | null;
  variants: StoredVariant[];
  repeats: number;
  concurrency: number;
  primaryScorer: string | null;
  baselineExperimentId: string | null;
  caseCount: number;
  cellCount: number;
}

/**
 * The cells the workspace's queued and running experiments (other than `exceptId`) may run at once: each
 * counts its `concurrency`, or its cells running now when more (a lowered concurrency does not stop the
 * cells already started). Read under a per-workspace lock held to the end of the transaction, so that
 * creations and concurrency changes of one workspace are judged one after the other.
 */
export async function concurrencyInFlight(tx: TenantTx, tenantId: string, exceptId?: string): Promise<number> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`experiments:${tenantId}`}, 0))`.execute(tx);
  const runningCells = (experimentId: string) =>
    tx
      .selectFrom('experiment_cells')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .whereRef('experiment_cells.experiment_id', '=', sql.ref(experimentId))
      .where('experiment_cells.status', '=', 'running');
  let query = tx
    .selectFrom('experiments')
    .select(sql<number>`coalesce(sum(greatest(experiments.concurrency, (${runningCells('experiments.id')}))), 0)`.as('total'))
    .where('experiments.tenant_id', '=', tenantId)
    .where('experiments.status', 'in', ['queued', 'running']);
  if (exceptId !== undefined) query = query.where('experiments.id', '<>', exceptId);
  const { total } = await query.executeTakeFirstOrThrow();
  return Number(total);
}

export async function insertExperiment(tx: TenantTx, tenantId: string, experiment: NewExperiment): Promise<Experiment> {
  return tx
    .insertInto('experiments')
    .values({
      id: newId('exp'),
      tenant_id: tenantId,
      agent_id: experiment.agentId,
      suite_id: experiment.suiteId,
      suite_name: experiment.suiteName,
      name: experiment.name,
      description: experiment.description,
      variants: JSON.stringify(experiment.variants),
      repeats: experiment.repeats,
      concurrency: experiment.concurrency,
      primary_scorer: experiment.primaryScorer,
      baseline_experiment_id: experiment.baselineExperimentId,
      status: 'queued',
      error: null,
      case_count: experiment.caseCount,
      cell_count: experiment.cellCount,
      started_at: null,
      ended_at: null,
    })
    .returning(EXPERIMENT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findExperiment(reader: TenantScoped, tenantId: string, experimentId: string): Promise<Experiment | undefined> {
  return reader.selectFrom('experiments').select(EXPERIMENT_COLUMNS).where('id', '=', experimentId).where('tenant_id', '=', tenantId).executeTakeFirst();
}

export interface ExperimentFilter {
  suiteId?: string;
  agentId?: string;
  status?: ExperimentStatus;
}

const experimentsPage = preparedPage('id', (db, filter: ExperimentFilter & { tenantId: string }) => {
  let q = db.selectFrom('experiments').select(EXPERIMENT_COLUMNS).where('tenant_id', '=', filter.tenantId);
  if (filter.suiteId !== undefined) q = q.where('suite_id', '=', filter.suiteId);
  if (filter.agentId !== undefined) q = q.where('agent_id', '=', filter.agentId);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  return q;
});

export async function listExperimentsPage(reader: TenantScoped, tenantId: string, filter: ExperimentFilter, pageQuery: PageQuery): Promise<Page<Experiment>> {
  const { suiteId, agentId, status } = filter;
  return experimentsPage(reader, { tenantId, suiteId: suiteId || undefined, agentId: agentId || undefined, status: status || undefined }, pageQuery);
}

export async function updateExperiment(
  tx: TenantTx,
  tenantId: string,
  experimentId: string,
  fields: { name?: string; description?: string | null; concurrency?: number },
): Promise<Experiment | undefined> {
  return tx
    .updateTable('experiments')
    .set({ ...fields, updated_at: new Date() })
    .where('id', '=', experimentId)
    .where('tenant_id', '=', tenantId)
    .returning(EXPERIMENT_COLUMNS)
    .executeTakeFirst();
}

/** queued → running; answers the status it then has (`running` again for a retried activity), or undefined when it is gone. */
export async function markExperimentRunning(tx: TenantTx, tenantId: string, experimentId: string): Promise<ExperimentStatus | undefined> {
  await tx
    .updateTable('experiments')
    .set({ status: 'running', started_at: new Date(), updated_at: new Date() })
    .where('id', '=', experimentId)
    .where('tenant_id', '=', tenantId)
    .where('status', '=', 'queued')
    .execute();
  return (await findExperiment(tx, tenantId, experimentId))?.status;
}

/** The end, once: answers false when the experiment had already ended. */
export async function markExperimentEnded(
  tx: TenantTx,
  tenantId: string,
  experimentId: string,
  end: { status: 'completed' | 'cancelled' | 'failed'; error?: RunError | null },
  from: ExperimentStatus[] = ['queued', 'running'],
): Promise<boolean> {
  const row = await tx
    .updateTable('experiments')
    .set({ status: end.status, error: end.error ? JSON.stringify(end.error) : null, ended_at: new Date(), updated_at: new Date() })
    .where('id', '=', experimentId)
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', from)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** What the first read after the end kept of a finished experiment's cells, when it has. */
export async function findExperimentSnapshot(reader: TenantScoped, tenantId: string, experimentId: string) {
  return reader
    .selectFrom('experiments')
    .select(['outcomes_snapshot', 'matrix_snapshot'])
    .where('id', '=', experimentId)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

/** Keeps what a read after the end found of the cells; only a finished experiment's cells are final. */
export async function saveExperimentSnapshot(tx: TenantTx, tenantId: string, experimentId: string, snapshot: { outcomes: string; matrix: string }): Promise<void> {
  await tx
    .updateTable('experiments')
    .set({ outcomes_snapshot: snapshot.outcomes, matrix_snapshot: snapshot.matrix })
    .where('id', '=', experimentId)
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', [...EXPERIMENT_TERMINAL_STATUSES])
    .execute();
}

export async function deleteExperimentById(tx: TenantTx, tenantId: string, experimentId: string): Promise<void> {
  await tx.deleteFrom('experiments').where('id', '=', experimentId).where('tenant_id', '=', tenantId).execute();
}

/** Every tenant's experiments (the owner role) still `queued` as `query` says (db/stranded-query.ts). */
export async function listStrandedExperiments(db: Db, query: StrandedQuery) {
  return strandedPage(db.selectFrom('experiments').select(['id', 'tenant_id', 'agent_id', 'concurrency']).where('status', '=', 'queued'), query).execute();
}
