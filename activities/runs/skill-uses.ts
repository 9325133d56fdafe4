import type { Db } from '../../db/database.js';
import { addRunSkillUse } from '../../db/runs.js';
import type { RunSkillUse } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { RunRef } from './types.js';

/** `use_skill` loaded a skill version: the run records it (`runs.skills`, shown on the run as `skills`). */
export async function recordSkillUse(db: Db, input: RunRef & { use: RunSkillUse }): Promise<void> {
  await withTenant(db, input.tenantId, (tx) => addRunSkillUse(tx, input.tenantId, input.runId, input.use));
}
