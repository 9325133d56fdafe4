import type { SemanticSimilarityConfig } from './config-schemas.js';
import { expectedText } from './expected-text.js';
import { shortNumber } from './reason-text.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * The cosine similarity of the output's and the expected value's embeddings (the platform's local
 * embedding model; an object expected is embedded as its JSON), clamped to [0, 1]: unrelated texts
 * can come out slightly negative. Default threshold 0.8. The model reads only the first
 * EMBEDDING_MAX_TOKENS (256) tokens of each text. An embedder that cannot answer is a scorer failure.
 */
export const semanticSimilarityScorer: ScorerDefinition<SemanticSimilarityConfig> = {
  readsOutput: true,

  problems: () => [],

  expectedProblem(_config, expected) {
    const text = expectedText(expected);
    return text === undefined || text.trim() === '' ? 'must be a non-empty string or an object' : undefined;
  },

  prepare(config) {
    return async (subject, context) => {
      const output = outputOf(subject);
      const expected = expectedText(subject.expected);
      if (expected === undefined) throw new Error('the case has no expected value to compare the output with');
      const [outputVector, expectedVector] = await context.embedder().embed([output, expected]);
      if (!outputVector || !expectedVector) throw new Error('the embedder answered no vectors');
      const similarity = cosine(outputVector, expectedVector);
      if (!Number.isFinite(similarity)) throw new Error('the embedder answered a vector without direction');
      const score = Math.min(1, Math.max(0, similarity));
      return verdict(config, score, `cosine similarity to the expected value ${shortNumber(similarity)}`);
    };
  },
};

/** Computed in full rather than as a dot product, so a vector that is not quite unit length does not skew it. */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(normA * normB);
}
