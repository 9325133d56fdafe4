import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { Db } from '../../db/database.js';
import { saveRunHistory } from '../../db/run-histories.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { RunRef } from './types.js';

const POLL_EVERY_MS = 200;

/**
 * Mirrors a finished run's Temporal history into Postgres, so it can be replayed against newer workflow
 * code (POST /v1/runs/{id}/replay) long after Temporal's retention has dropped it. It waits for the run's
 * workflow to close first, so the stored history is the whole of it.
 */
export async function storeRunHistory(db: Db, temporal: Client, ref: RunRef): Promise<number> {
  const context = Context.current();
  const handle = temporal.workflow.getHandle(ref.runId);
  while ((await handle.describe()).status.name === 'RUNNING') {
    context.heartbeat();
    await context.sleep(POLL_EVERY_MS);
  }
  const history = await handle.fetchHistory();
  const eventCount = history.events?.length ?? 0;
  const json = historyToJSON(history);
  await withTenant(db, ref.tenantId, (tx) => saveRunHistory(tx, ref.tenantId, ref.runId, json, eventCount));
  return eventCount;
}
