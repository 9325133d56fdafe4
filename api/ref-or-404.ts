import type { TenantTx } from '../db/tenant-transaction.js';
import { orNotFound } from './errors.js';

/** A repository's lookup of one row of the workspace by its id (or, for named resources, id or name). */
type FindByRef<Row> = (tx: TenantTx, tenantId: string, ref: string) => Promise<Row | undefined>;

/**
 * The lookup that operations on one resource start with: what `find` finds for `ref`, or the 404 that
 * names `what` was asked for.
 */
export function refOr404<Row>(find: FindByRef<Row>, what: string): (tx: TenantTx, tenantId: string, ref: string) => Promise<Row> {
  return async (tx, tenantId, ref) => orNotFound(await find(tx, tenantId, ref), what, ref);
}
