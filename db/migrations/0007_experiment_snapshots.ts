import { sql, type Kysely } from 'kysely';

/**
 * A finished experiment's cells never change again, so the first read after its end keeps what it read
 * of them (the leaderboard's input and the results matrix, as JSON text) and later reads reuse it:
 * reading 5,000 cells back field by field is what made a big experiment's GET slow.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('outcomes_snapshot', 'text').addColumn('matrix_snapshot', 'text').execute();
  // 0006 gained `threads.source` after its first commit: a database migrated in between gets it here.
  await sql`alter table threads add column if not exists source text not null default 'api'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('outcomes_snapshot').dropColumn('matrix_snapshot').execute();
}
