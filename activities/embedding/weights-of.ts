import type { EmbeddedBy } from '../../db/stored-embedding.js';
import type { Embedder } from './pool.js';

/** The weights an embedder's vectors are stored under (db/stored-embedding.ts): its model id and dtype. */
export function weightsOf(embedder: Embedder): EmbeddedBy {
  return { embedding_model: embedder.modelId, embedding_dtype: embedder.dtype };
}
