import { sql, type Kysely } from 'kysely';

/**
 * Which weights made each vector, indexed: a worker asks at every start whether any vector was made by
 * other weights than its embedder's (activities/embedding/reembed.ts), which without an index reads both
 * tables whole, in the usual case to find nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index memories_embedding_weights_idx on memories (embedding_model, embedding_dtype)`.execute(db);
  await sql`create index chunks_embedding_weights_idx on chunks (embedding_model, embedding_dtype)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index chunks_embedding_weights_idx`.execute(db);
  await sql`drop index memories_embedding_weights_idx`.execute(db);
}
