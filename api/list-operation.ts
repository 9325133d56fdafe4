import type { Page, PageQuery } from '../db/page.js';
import type { TenantScoped } from '../db/tenant-transaction.js';
import type { AppDeps } from './deps.js';
import type { ErrorCode } from './errors.js';
import { defineOperation, type Access, type Caller, type JsonSchema, type Operation } from './operation.js';
import { listOf, pageQuery } from './schemas.js';

/**
 * A `GET` of one of the workspace's collections, a page at a time (`limit`, `cursor`; docs/decisions.md
 * "Lists"): the body is `{"<plural>": [...], "next_cursor": …}`. Every collection lists the same way, so
 * its operation declares only what differs — path, names, item schema, the repository's page query and
 * the item's JSON — and stays one declaration in its route file.
 */
export function defineListOperation<Row>(list: {
  operationId: string;
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Who may list: any key unless said otherwise. */
  access?: Access;
  /** Refusals besides the ones every operation has, e.g. `forbidden` from `authorize`. */
  errors?: ErrorCode[];
  /** A check of the caller in the same read, before the page (members: managers only); throws to refuse. */
  authorize?(reader: TenantScoped, caller: Caller): Promise<unknown>;
  /** The body's key for the items, e.g. `agents`. */
  plural: string;
  /** The 200 response's description, e.g. "A page of agents". */
  pageDescription: string;
  itemSchema: JsonSchema;
  page(reader: TenantScoped, tenantId: string, query: PageQuery): Promise<Page<Row>>;
  /** An item's JSON; `deps` for what depends on the service (a deployment's page address). */
  toJson(row: Row, deps: AppDeps): unknown;
}): Operation<Record<string, never>, PageQuery> {
  return defineOperation<Record<string, never>, PageQuery>({
    operationId: list.operationId,
    method: 'get',
    path: list.path,
    tag: list.tag,
    summary: list.summary,
    description: list.description,
    access: list.access ?? 'key',
    query: pageQuery,
    errors: list.errors,
    responses: { 200: { description: list.pageDescription, schema: listOf(list.plural, list.itemSchema) } },
    handler: async ({ query, caller, tenantReads, deps }) => {
      const { items, nextCursor } = await tenantReads(async (reader) => {
        await list.authorize?.(reader, caller);
        return list.page(reader, caller.tenantId, query);
      });
      return { status: 200, body: { [list.plural]: items.map((row) => list.toJson(row, deps)), next_cursor: nextCursor } };
    },
  });
}
