import { sql } from 'kysely';
import type { Db } from './database.js';

/**
 * What `memories` and `chunks` store with every vector: the vector in pgvector's text form, and the
 * model id and dtype that made it. Vectors made by different weights live in different spaces: a search
 * compares only those of the current weights, and the `reembedVectors` workflow brings the others over
 * (activities/embedding/reembed.ts).
 */
export interface StoredEmbedding {
  embedding: string;
  embedding_model: string;
  embedding_dtype: string;
}

/** The weights a vector was made by. */
export type EmbeddedBy = Omit<StoredEmbedding, 'embedding'>;

/** The tables that store vectors. */
export type VectorTable = 'memories' | 'chunks';

/**
 * Whether any row of `table`, of any tenant (the owner role, past row-level security), has a vector
 * `weights` did not make: two probes of the table's (embedding_model, embedding_dtype) index (migration
 * 0018), so it costs nothing when every vector is current.
 */
export async function tableHasVectorsEmbeddedOtherwise(db: Db, table: VectorTable, weights: EmbeddedBy): Promise<boolean> {
  const pair = sql`(${weights.embedding_model}, ${weights.embedding_dtype})`;
  const row = await db
    .selectFrom(table)
    .select('id')
    .where(sql<boolean>`(embedding_model, embedding_dtype) < ${pair} or (embedding_model, embedding_dtype) > ${pair}`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
