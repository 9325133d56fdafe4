/**
 * Applies guardrails to one text, for the activity that guards a run's input and output.
 *
 *   - Guardrails run in the order given; only those whose target is the text's (`both` is both).
 *   - `warn` records a trip and leaves the text alone. `redact` records a trip and rewrites the text;
 *     later guardrails see the redacted text. `block` records a trip and stops evaluation: the
 *     outcome's `blocked` is that trip and its `text` is as redacted so far.
 *   - What `redact` replaces:
 *       regex, keyword: each match becomes `[REDACTED]` (regex searches only the first 20 000
 *         characters; empty matches are ignored);
 *       pii: each value becomes its label (`[EMAIL]`, `[PHONE]`, `[CREDIT_CARD]`, `[US_SSN]`, `[IBAN]`,
 *         `[IP_ADDRESS]`) or, with `redaction: 'mask'`, stars but for its last 4 characters;
 *       max_length: the text is truncated to `maxChars` code points;
 *       json_schema, semantic: the whole text becomes `[REDACTED]` (a verdict has no span).
 *   - A semantic guardrail calls its decision model (so this can take seconds and cost tokens; the
 *     calls and their usage are in `decisionModelCalls`). `options.signal` cancels it: the promise
 *     then rejects with the signal's reason.
 *   - A config that `guardrailConfigProblems` would refuse throws GuardrailConfigError (not retryable).
 */
import { guardrailConfigProblems } from './config-problems.js';
import { GuardrailConfigError } from './errors.js';
import type { Check } from './kind-definition.js';
import { GUARDRAIL_KIND_DEFINITIONS } from './kinds.js';
import { GUARDRAIL_MODEL_ENV } from './semantic-guardrail.js';
import type { DecisionModelCall, Guardrail, GuardrailOptions, GuardrailOutcome, GuardrailTrip } from './types.js';

const TARGETS: readonly string[] = ['input', 'output', 'both'];
const ACTIONS: readonly string[] = ['block', 'redact', 'warn'];

export async function applyGuardrails(
  guardrails: readonly Guardrail[],
  text: string,
  target: 'input' | 'output',
  options: GuardrailOptions = {},
): Promise<GuardrailOutcome> {
  const signal = options.signal ?? new AbortController().signal;
  const defaultDecisionModel = options.defaultDecisionModel ?? (process.env[GUARDRAIL_MODEL_ENV] || undefined);
  const trips: GuardrailTrip[] = [];
  const decisionModelCalls: DecisionModelCall[] = [];
  let current = text;

  for (const guardrail of guardrails) {
    checkTargetAndAction(guardrail);
    if (guardrail.target !== 'both' && guardrail.target !== target) continue;
    signal.throwIfAborted();
    const check = preparedCheck(guardrail, defaultDecisionModel, options.workspaceProviders);
    const finding = await check(current, {
      signal,
      modelSettings: options.modelSettings,
      defaultDecisionModel,
      guardrailName: guardrail.name,
      recordDecisionModelCall: (call) => decisionModelCalls.push(call),
    });
    if (!finding) continue;

    const trip: GuardrailTrip = { name: guardrail.name, kind: guardrail.kind, action: guardrail.action, target, detail: finding.detail };
    trips.push(trip);
    if (guardrail.action === 'block') return { text: current, blocked: trip, trips, decisionModelCalls };
    if (guardrail.action === 'redact') current = finding.redact();
  }
  return { text: current, blocked: null, trips, decisionModelCalls };
}

// Prepared checks (compiled patterns, keyword regexes, ajv validators) by config, in a small LRU:
// the same guardrails guard every turn of every run.
const MAX_PREPARED = 512;
const prepared = new Map<string, Check>();

function preparedCheck(guardrail: Guardrail, defaultDecisionModel: string | undefined, workspaceProviders: ReadonlySet<string> | undefined): Check {
  // The default decision model and the workspace's providers are part of the key: they decide whether a semantic config is usable.
  const semantic = guardrail.kind === 'semantic';
  const key = JSON.stringify([guardrail.kind, guardrail.config, semantic ? defaultDecisionModel : null, semantic ? [...(workspaceProviders ?? [])].sort() : null]);
  let check = prepared.get(key);
  if (check) {
    prepared.delete(key); // re-inserted below as the most recently used
  } else {
    const problems = guardrailConfigProblems(guardrail.kind, guardrail.config, { defaultDecisionModel, workspaceProviders });
    if (problems.length > 0) throw new GuardrailConfigError(guardrail.name, problems);
    // A copy: the check must not change if the caller later edits the config object it was keyed by.
    check = GUARDRAIL_KIND_DEFINITIONS[guardrail.kind].prepare(structuredClone(guardrail.config));
  }
  prepared.set(key, check);
  if (prepared.size > MAX_PREPARED) prepared.delete(prepared.keys().next().value!);
  return check;
}

/** A stored guardrail with a target or action the engine does not know would otherwise be skipped silently. */
function checkTargetAndAction(guardrail: Guardrail): void {
  const problems = [
    ...(TARGETS.includes(guardrail.target) ? [] : [{ field: 'target', message: `must be one of ${TARGETS.join(', ')}` }]),
    ...(ACTIONS.includes(guardrail.action) ? [] : [{ field: 'action', message: `must be one of ${ACTIONS.join(', ')}` }]),
  ];
  if (problems.length > 0) throw new GuardrailConfigError(guardrail.name, problems);
}
