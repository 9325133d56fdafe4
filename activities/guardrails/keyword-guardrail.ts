import type { KeywordConfig } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';
import { matchSpans, REDACTED, replaceSpans } from './spans.js';

/**
 * Keywords match as whole words, ignoring case: `ass` does not match inside `class`, and `new york`
 * matches `New  York` across any whitespace. A word character is any letter, digit, combining mark
 * or connector in any script, so the boundary works beyond ASCII (where `\b` does not).
 */
const WORD_CHARACTER = String.raw`[\p{L}\p{N}\p{M}\p{Pc}]`;

export const keywordGuardrail: GuardrailKindDefinition<KeywordConfig> = {
  problems(config) {
    return config.keywords.flatMap((keyword, index) =>
      keyword.trim() === '' ? [{ field: `config.keywords.${index}`, message: 'has no characters besides whitespace' }] : [],
    );
  },

  prepare(config) {
    const pattern = keywordPattern(config.keywords);
    return (text) => {
      const spans = matchSpans(pattern, text);
      if (spans.length === 0) return undefined;
      const found = new Set(spans.map((span) => text.slice(span.start, span.end).toLowerCase().replace(/\s+/g, ' ')));
      return {
        detail: `text contains the keyword(s) ${[...found].join(', ')}`,
        redact: () => replaceSpans(text, spans, () => REDACTED),
      };
    };
  },
};

function keywordPattern(keywords: string[]): RegExp {
  const phrases = [...new Set(keywords.map((keyword) => keyword.trim().toLowerCase()))]
    // Longest first, so that `new york city` wins over `new york` where both start.
    .sort((a, b) => b.length - a.length)
    .map((keyword) => keyword.split(/\s+/).map(escapeRegExp).join(String.raw`\s+`));
  return new RegExp(`(?<!${WORD_CHARACTER})(?:${phrases.join('|')})(?!${WORD_CHARACTER})`, 'giu');
}

/** Escapes only syntax characters: with the `u` flag any other escape is an error. */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}
