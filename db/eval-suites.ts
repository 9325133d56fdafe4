import { sql } from 'kysely';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { EvalSuite, StoredScorer } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/**
 * The `eval_suites` table. A suite's name is unique per agent, not per workspace, so a ref may name
 * several suites: `findSuitesByRef` answers all of them and the caller decides (the API answers 409
 * with their ids).
 */

export type SuiteWithCount = EvalSuite & { case_count: number };

function suitesWithCounts(reader: TenantScoped, tenantId: string) {
  return reader
    .selectFrom('eval_suites')
    .selectAll('eval_suites')
    .select((eb) =>
      eb
        .selectFrom('eval_cases')
        .whereRef('eval_cases.suite_id', '=', 'eval_suites.id')
        .select(sql<number>`count(*)::int`.as('n'))
        .as('case_count'),
    )
    .where('eval_suites.tenant_id', '=', tenantId)
    .$narrowType<{ case_count: number }>();
}

/**
 * The suites `ref` names: the one with that id, else every suite of that name (of `agentId` only, when
 * given). Ids first, as everywhere (db/refs.ts).
 */
export async function findSuitesByRef(reader: TenantScoped, tenantId: string, ref: string, agentId?: string): Promise<SuiteWithCount[]> {
  const byId = await suitesWithCounts(reader, tenantId).where('eval_suites.id', '=', ref).executeTakeFirst();
  if (byId && (agentId === undefined || byId.agent_id === agentId)) return [byId];
  let q = suitesWithCounts(reader, tenantId).where('eval_suites.name', '=', ref);
  if (agentId !== undefined) q = q.where('eval_suites.agent_id', '=', agentId);
  return q.orderBy('eval_suites.id').execute();
}

export async function findSuite(tx: TenantTx, tenantId: string, suiteId: string): Promise<SuiteWithCount | undefined> {
  return suitesWithCounts(tx, tenantId).where('eval_suites.id', '=', suiteId).executeTakeFirst();
}

/** Locks the suite's row, so its cases cannot change while an experiment copies them. */
export async function lockSuite(tx: TenantTx, tenantId: string, suiteId: string): Promise<EvalSuite | undefined> {
  return tx.selectFrom('eval_suites').selectAll().where('id', '=', suiteId).where('tenant_id', '=', tenantId).forUpdate().executeTakeFirst();
}

const suitesPage = preparedPage('eval_suites.id', (db, { tenantId, agentId }: { tenantId: string; agentId: string | undefined }) => {
  const q = suitesWithCounts(db, tenantId);
  return agentId === undefined ? q : q.where('eval_suites.agent_id', '=', agentId);
});

export async function listSuitesPage(reader: TenantScoped, tenantId: string, filter: { agentId?: string }, pageQuery: PageQuery): Promise<Page<SuiteWithCount>> {
  return suitesPage(reader, { tenantId, agentId: filter.agentId || undefined }, pageQuery);
}

export interface SuiteFields {
  description?: string | null;
  scorers?: StoredScorer[];
}

/** Creates the agent's suite of this name, or updates the fields given of the one it has. */
export async function saveSuite(
  tx: TenantTx,
  tenantId: string,
  agentId: string,
  name: string,
  fields: SuiteFields,
): Promise<{ suite: SuiteWithCount; created: boolean }> {
  const inserted = await tx
    .insertInto('eval_suites')
    .values({
      id: newId('sui'),
      tenant_id: tenantId,
      agent_id: agentId,
      name,
      description: fields.description ?? null,
      scorers: JSON.stringify(fields.scorers ?? []),
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'agent_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return { suite: (await findSuite(tx, tenantId, inserted.id))!, created: true };
  const existingId = (await findSuiteIdByName(tx, tenantId, agentId, name))!;
  return { suite: await updateSuite(tx, tenantId, existingId, fields), created: false };
}

/** Changes the fields given; a rename onto a name the agent already uses fails on the unique key. */
export async function updateSuite(tx: TenantTx, tenantId: string, suiteId: string, fields: SuiteFields & { name?: string }): Promise<SuiteWithCount> {
  await tx
    .updateTable('eval_suites')
    .set({
      ...(fields.name !== undefined && { name: fields.name }),
      ...(fields.description !== undefined && { description: fields.description }),
      ...(fields.scorers !== undefined && { scorers: JSON.stringify(fields.scorers) }),
      updated_at: new Date(),
    })
    .where('id', '=', suiteId)
    .where('tenant_id', '=', tenantId)
    .execute();
  return (await findSuite(tx, tenantId, suiteId))!;
}

/** Deletes the suite and its cases; experiments keep their copies of the cases (db/migrations/0006_evals.ts). */
export async function deleteSuiteById(tx: TenantTx, tenantId: string, suiteId: string): Promise<void> {
  await tx.deleteFrom('eval_suites').where('id', '=', suiteId).where('tenant_id', '=', tenantId).execute();
}

/** The id of the agent's suite of this name, if it has one. */
export async function findSuiteIdByName(tx: TenantTx, tenantId: string, agentId: string, name: string): Promise<string | undefined> {
  const row = await tx
    .selectFrom('eval_suites')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('agent_id', '=', agentId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.id;
}
