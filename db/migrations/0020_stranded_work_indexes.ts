import { sql, type Kysely } from 'kysely';

/**
 * Work recorded but never handed to Temporal, indexed: every worker process asks about once a minute for
 * runs still `queued`, documents still `accepted` and experiments still `queued` since a while
 * (workers/stranded-work/). Partial indexes, so the question reads only the few rows in those states.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index runs_queued_idx on runs (created_at) where status = 'queued'`.execute(db);
  await sql`create index documents_accepted_idx on documents (created_at) where status = 'accepted'`.execute(db);
  await sql`create index experiments_queued_idx on experiments (created_at) where status = 'queued'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index experiments_queued_idx`.execute(db);
  await sql`drop index documents_accepted_idx`.execute(db);
  await sql`drop index runs_queued_idx`.execute(db);
}
