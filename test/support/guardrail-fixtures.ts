import { applyGuardrails, type Guardrail, type GuardrailKind, type GuardrailOptions } from '../../activities/guardrails/index.js';

/** A guardrail with the engine's usual defaults (both targets, block), overridable. */
export function guardrail(kind: GuardrailKind, config: Record<string, unknown>, overrides: Partial<Guardrail> = {}): Guardrail {
  return { name: `${kind}-guard`, kind, target: 'both', action: 'block', config, ...overrides };
}

/** A semantic guardrail whose decision model is the scripted provider answering `answer`. */
export function scriptedSemantic(
  questions: Record<string, unknown>,
  answer: string,
  config: Record<string, unknown> = {},
  overrides: Partial<Guardrail> = {},
): Guardrail {
  return guardrail('semantic', { questions, model: 'scripted', script: [{ text: answer }], ...config }, overrides);
}

/** The text after one guardrail redacts it, checking that the guardrail did trip. */
export async function redacted(kind: GuardrailKind, config: Record<string, unknown>, text: string, options?: GuardrailOptions): Promise<string> {
  const outcome = await applyGuardrails([guardrail(kind, config, { action: 'redact' })], text, 'output', options);
  if (outcome.trips.length !== 1) throw new Error(`expected one trip on ${JSON.stringify(text)}, got ${outcome.trips.length}`);
  return outcome.text;
}

/** Whether one guardrail (action warn) trips on the text. */
export async function trips(kind: GuardrailKind, config: Record<string, unknown>, text: string, options?: GuardrailOptions): Promise<boolean> {
  const outcome = await applyGuardrails([guardrail(kind, config, { action: 'warn' })], text, 'input', options);
  return outcome.trips.length > 0;
}
