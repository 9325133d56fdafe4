import type { TenantTx } from '../db/tenant-transaction.js';
import type { AppDeps } from './deps.js';
import type { ErrorCode } from './errors.js';
import { defineOperation, type Access, type JsonSchema, type Operation } from './operation.js';
import { deletionResult } from './schemas.js';

/**
 * How a delete removes its resource: `remove` does it all and answers the id (throwing the 404 when
 * nothing is there), or `find` looks it up (its 404) and `deleteById` deletes what it found. What
 * `deleteById` answers goes to `afterCommit`, which runs once the deletion is committed: for what lives
 * outside the database (an agent's Temporal Schedules).
 */
type Removal<Params, Query, Removed> =
  | { remove(tx: TenantTx, tenantId: string, params: Params, query: Query): Promise<string> }
  | {
      find(tx: TenantTx, tenantId: string, params: Params, query: Query): Promise<{ id: string }>;
      deleteById(tx: TenantTx, tenantId: string, id: string): Promise<Removed>;
      afterCommit?(deps: AppDeps, removed: Removed): Promise<void>;
    };

/**
 * A `DELETE` of one resource of the workspace: `{"deleted": true, "id": …}`, or 404 when the path names
 * none. Every such delete answers the same way, so its operation declares only what differs — path,
 * names, parameters and how the resource goes — and stays one declaration in its route file.
 */
export function defineDeleteOperation<Params, Query = Record<string, unknown>, Removed = unknown>(
  deletion: {
    operationId: string;
    path: string;
    tag: string;
    summary: string;
    /** Who may delete: any key unless said otherwise. */
    access?: Access;
    params: JsonSchema;
    query?: JsonSchema;
    /** What the handler can answer: `not_found` unless said otherwise. */
    errors?: ErrorCode[];
    /** The 200 response's description: "Deleted" unless said otherwise. */
    resultDescription?: string;
  } & Removal<Params, Query, Removed>,
): Operation<Params, Query> {
  const remove = async (tx: TenantTx, tenantId: string, params: Params, query: Query): Promise<{ id: string; removed?: Removed }> => {
    if ('remove' in deletion) return { id: await deletion.remove(tx, tenantId, params, query) };
    const { id } = await deletion.find(tx, tenantId, params, query);
    return { id, removed: await deletion.deleteById(tx, tenantId, id) };
  };
  return defineOperation<Params, Query>({
    operationId: deletion.operationId,
    method: 'delete',
    path: deletion.path,
    tag: deletion.tag,
    summary: deletion.summary,
    access: deletion.access ?? 'key',
    params: deletion.params,
    ...(deletion.query && { query: deletion.query }),
    errors: deletion.errors ?? ['not_found'],
    responses: { 200: { description: deletion.resultDescription ?? 'Deleted', schema: deletionResult } },
    handler: async ({ params, query, caller, tenant, deps }) => {
      const { id, removed } = await tenant((tx) => remove(tx, caller.tenantId, params, query));
      if ('afterCommit' in deletion && deletion.afterCommit) await deletion.afterCommit(deps, removed as Removed);
      return { status: 200, body: { deleted: true, id } };
    },
  });
}
