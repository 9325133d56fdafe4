import type { Kysely } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import * as foundation from './migrations/0001_foundation.js';
import * as runs from './migrations/0002_runs.js';
import * as promptsGuardrails from './migrations/0003_prompts_guardrails.js';
import * as memoryKnowledge from './migrations/0004_memory_knowledge.js';
import * as oauth from './migrations/0005_oauth.js';
import * as evals from './migrations/0006_evals.js';
import * as experimentSnapshots from './migrations/0007_experiment_snapshots.js';
import * as skills from './migrations/0008_skills.js';
import * as providers from './migrations/0009_providers.js';
import * as schedules from './migrations/0010_schedules.js';
import * as subagents from './migrations/0011_subagents.js';
import * as members from './migrations/0012_members.js';
import * as channelsVoice from './migrations/0013_channels_voice.js';
import * as webhooks from './migrations/0014_webhooks.js';
import * as deployments from './migrations/0015_deployments.js';
import * as browserSignIns from './migrations/0016_browser_sign_ins.js';
import * as apiKeyRevocations from './migrations/0017_api_key_revocations.js';
import * as embeddingWeightsIndex from './migrations/0018_embedding_weights_index.js';
import * as runHistoryQueue from './migrations/0019_run_history_queue.js';
import * as strandedWorkIndexes from './migrations/0020_stranded_work_indexes.js';

/** Every migration, in order. Listed here rather than read from disk so the build is self-contained. */
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_runs': runs,
  '0003_prompts_guardrails': promptsGuardrails,
  '0004_memory_knowledge': memoryKnowledge,
  '0005_oauth': oauth,
  '0006_evals': evals,
  '0007_experiment_snapshots': experimentSnapshots,
  '0008_skills': skills,
  '0009_providers': providers,
  '0010_schedules': schedules,
  '0011_subagents': subagents,
  '0012_members': members,
  '0013_channels_voice': channelsVoice,
  '0014_webhooks': webhooks,
  '0015_deployments': deployments,
  '0016_browser_sign_ins': browserSignIns,
  '0017_api_key_revocations': apiKeyRevocations,
  '0018_embedding_weights_index': embeddingWeightsIndex,
  '0019_run_history_queue': runHistoryQueue,
  '0020_stranded_work_indexes': strandedWorkIndexes,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the schema up to date; throws with the failing migration's error. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the Migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
