import { codePointLength, firstCodePoints } from './code-points.js';
import type { MaxLengthConfig } from './config-schemas.js';
import type { GuardrailKindDefinition } from './kind-definition.js';

/** Trips on a text longer than `maxChars` code points; redaction truncates it to that length. */
export const maxLengthGuardrail: GuardrailKindDefinition<MaxLengthConfig> = {
  problems() {
    return [];
  },

  prepare(config) {
    return (text) => {
      const length = codePointLength(text);
      if (length <= config.maxChars) return undefined;
      return {
        detail: `text has ${length} characters, more than the limit of ${config.maxChars}`,
        redact: () => firstCodePoints(text, config.maxChars),
      };
    };
  },
};
