import { sql } from 'kysely';
import { findTenantRow } from './find-tenant-row.js';
import { newId } from './ids.js';
import type { Page } from './page.js';
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
 * Where a page of threads ends: the last thread's `updated_at` (microseconds since the epoch, as text,
 * exact where a Date keeps milliseconds) and id. Carried in the cursor itself, as a thread's
 * `updated_at` moves when a run starts or ends in it: read again, it would make the next page repeat
 * or skip threads.
 */
export interface ThreadCursor {
  updatedAtMicros: string;
  id: string;
}

/**
 * A cursor's text, `<microseconds>.<thread id>`: any text of this form is a place in the list, so the
 * query's schema can say it. At most 16 digits, so that it stays a bigint and a timestamp.
 */
export const THREAD_CURSOR_PATTERN = '^[0-9]{1,16}\\.thr_[0-9A-Za-z]{1,64}$';

export function threadCursorText(cursor: ThreadCursor): string {
  return `${cursor.updatedAtMicros}.${cursor.id}`;
}

/** Undefined when `text` is not of THREAD_CURSOR_PATTERN's form. */
export function parseThreadCursor(text: string): ThreadCursor | undefined {
  if (!new RegExp(THREAD_CURSOR_PATTERN).test(text)) return undefined;
  const dot = text.indexOf('.');
  return { updatedAtMicros: text.slice(0, dot), id: text.slice(dot + 1) };
}

/**
 * A page of the agent's threads, most recently active first, each with its number of runs: those
 * strictly after `after` in (updated_at, id) order.
 */
export async function listThreadsPage(
  reader: TenantScoped,
  tenantId: string,
  agentId: string,
  { limit, after }: { limit: number; after?: ThreadCursor },
): Promise<Page<ThreadSummary>> {
  let q = reader
    .selectFrom('threads')
    .select(['threads.id', 'threads.title', 'threads.created_at', 'threads.updated_at'])
    .select(sql<string>`(extract(epoch from threads.updated_at) * 1000000)::bigint::text`.as('updated_at_micros'))
    .select((eb) => eb.selectFrom('runs').select(eb.fn.countAll<number>().as('n')).whereRef('runs.thread_id', '=', 'threads.id').as('run_count'))
    .where('threads.tenant_id', '=', tenantId)
    .where('threads.agent_id', '=', agentId)
    .where('threads.source', '!=', 'eval')
    .orderBy('threads.updated_at', 'desc')
    .orderBy('threads.id', 'desc')
    .limit(limit + 1);
  if (after) {
    const updatedAt = sql`timestamptz 'epoch' + ${after.updatedAtMicros}::bigint * interval '1 microsecond'`;
    q = q.where(sql<boolean>`(threads.updated_at, threads.id) < (${updatedAt}, ${after.id})`);
  }
  const rows = await q.execute();
  const items = rows.slice(0, limit).map(({ updated_at_micros: _, ...row }) => ({ ...row, run_count: Number(row.run_count ?? 0) }));
  const last = rows.length > limit ? rows[limit - 1]! : undefined;
  return { items, nextCursor: last ? threadCursorText({ updatedAtMicros: last.updated_at_micros, id: last.id }) : null };
}
