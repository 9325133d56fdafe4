import type { TenantScoped } from '../db/tenant-transaction.js';
import { orNotFound } from './errors.js';

/**
 * A repository's lookup of one row of the workspace by its id (or, for named resources, id or name), in
 * whatever `Scope` it reads from: a tenant transaction, or a tenant read when the lookup only reads.
 */
type FindByRef<Row, Scope extends TenantScoped> = (scope: Scope, tenantId: string, ref: string) => Promise<Row | undefined>;

/**
 * The lookup that operations on one resource start with: what `find` finds for `ref`, or the 404 that
 * names `what` was asked for.
 */
export function refOr404<Row, Scope extends TenantScoped>(find: FindByRef<Row, Scope>, what: string): (scope: Scope, tenantId: string, ref: string) => Promise<Row> {
  return async (scope, tenantId, ref) => orNotFound(await find(scope, tenantId, ref), what, ref);
}
