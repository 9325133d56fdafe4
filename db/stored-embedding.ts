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
