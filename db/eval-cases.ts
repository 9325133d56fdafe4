import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { EvalCase, StoredScorer } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `eval_cases` table: a suite's inputs with what is expected of them. */

export interface NewCase {
  input: string;
  expected: unknown;
  metadata: Record<string, unknown>;
  tags: string[];
  scorers: StoredScorer[] | null;
}

/** Inserts every case, in order, in the caller's transaction (so a batch is all or nothing). */
export async function insertCases(tx: TenantTx, tenantId: string, suiteId: string, cases: NewCase[]): Promise<EvalCase[]> {
  if (cases.length === 0) return [];
  const rows = await tx
    .insertInto('eval_cases')
    .values(
      cases.map((c) => ({
        id: newId('case'),
        tenant_id: tenantId,
        suite_id: suiteId,
        input: c.input,
        expected: c.expected === null || c.expected === undefined ? null : JSON.stringify(c.expected),
        metadata: JSON.stringify(c.metadata),
        tags: JSON.stringify(c.tags),
        scorers: c.scorers === null ? null : JSON.stringify(c.scorers),
      })),
    )
    .returningAll()
    .execute();
  return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
}

const casesPage = preparedPage('id', (db, { tenantId, suiteId }: { tenantId: string; suiteId: string }) =>
  db.selectFrom('eval_cases').selectAll().where('tenant_id', '=', tenantId).where('suite_id', '=', suiteId),
);

export async function listCasesPage(reader: TenantScoped, tenantId: string, suiteId: string, pageQuery: PageQuery): Promise<Page<EvalCase>> {
  return casesPage(reader, { tenantId, suiteId }, pageQuery);
}

/** Every case of the suite, oldest first: what an experiment copies into its cells. */
export async function listAllCases(tx: TenantTx, tenantId: string, suiteId: string): Promise<EvalCase[]> {
  return tx.selectFrom('eval_cases').selectAll().where('tenant_id', '=', tenantId).where('suite_id', '=', suiteId).orderBy('id').execute();
}

/** Deletes the case; answers its id, or undefined when the tenant has no such case. */
export async function deleteCaseById(tx: TenantTx, tenantId: string, caseId: string): Promise<string | undefined> {
  const row = await tx.deleteFrom('eval_cases').where('id', '=', caseId).where('tenant_id', '=', tenantId).returning('id').executeTakeFirst();
  return row?.id;
}
