import { sql } from 'kysely';
import { findTenantRow } from './find-tenant-row.js';
import { newId } from './ids.js';
import { page, type Page, type PageQuery } from './page.js';
import type { RunSource } from './runs.js';
import type { Thread } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `threads` table: an agent's conversations, each a sequence of runs. */

/** Starts a thread titled after the first line of its first input; answers its id. */
export async function insertThread(tx: TenantTx, tenantId: string, agentId: string, firstInput: string, source: RunSource = 'api'): Promise<string> {
  const id = newId('thr');
  await tx.insertInto('threads').values({ id, tenant_id: tenantId, agent_id: agentId, title: threadTitle(firstInput), source }).execute();
  return id;
}

function threadTitle(input: string): string {
  const line = input.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line || 'untitled';
}

/** Marks the thread active at `at` (default now); with `agentId`, only a thread of that agent. False when there is no such thread. */
export async function touchThread(
  tx: TenantTx,
  tenantId: string,
  threadId: string,
  { agentId, at = new Date() }: { agentId?: string; at?: Date } = {},
): Promise<boolean> {
  let q = tx.updateTable('threads').set({ updated_at: at }).where('id', '=', threadId).where('tenant_id', '=', tenantId);
  if (agentId) q = q.where('agent_id', '=', agentId);
  return (await q.returning('id').executeTakeFirst()) !== undefined;
}

export async function findThread(reader: TenantScoped, tenantId: string, agentId: string, threadId: string): Promise<Thread | undefined> {
  return findTenantRow(reader, 'threads', tenantId, { id: threadId, agent_id: agentId });
}

export type ThreadSummary = Pick<Thread, 'id' | 'title' | 'created_at' | 'updated_at'> & { run_count: number };

/**
 * A page of the agent's threads, most recently active first, each with its number of runs. The cursor
 * is the last thread of the previous page; the page continues strictly after it in (updated_at, id) order.
 */
export async function listThreadsPage(reader: TenantScoped, tenantId: string, agentId: string, { limit, cursor }: PageQuery): Promise<Page<ThreadSummary>> {
  let q = reader
    .selectFrom('threads')
    .select(['threads.id', 'threads.title', 'threads.created_at', 'threads.updated_at'])
    .select((eb) => eb.selectFrom('runs').select(eb.fn.countAll<number>().as('n')).whereRef('runs.thread_id', '=', 'threads.id').as('run_count'))
    .where('threads.tenant_id', '=', tenantId)
    .where('threads.agent_id', '=', agentId)
    .where('threads.source', '!=', 'eval')
    .orderBy('threads.updated_at', 'desc')
    .orderBy('threads.id', 'desc')
    .limit(limit + 1);
  if (cursor) {
    const after = await reader.selectFrom('threads').select(['updated_at', 'id']).where('id', '=', cursor).where('tenant_id', '=', tenantId).executeTakeFirst();
    if (after) q = q.where(sql<boolean>`(threads.updated_at, threads.id) < (${after.updated_at}, ${after.id})`);
  }
  const rows = await q.execute();
  return page(
    rows.map((row) => ({ ...row, run_count: Number(row.run_count ?? 0) })),
    limit,
  );
}
