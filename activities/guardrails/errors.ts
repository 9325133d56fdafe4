import type { GuardrailConfigProblem } from './types.js';

/**
 * A stored guardrail whose config does not pass `guardrailConfigProblems` (written before a rule was
 * tightened, or not through the API). Retrying cannot help: the activity should fail for good.
 */
export class GuardrailConfigError extends Error {
  override readonly name = 'GuardrailConfigError';

  constructor(
    readonly guardrail: string,
    readonly problems: GuardrailConfigProblem[],
  ) {
    super(`guardrail '${guardrail}' has an unusable config: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
  }
}
