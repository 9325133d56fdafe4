import type { ModelSettings } from '../models/settings.js';
import type { TurnUsage } from '../models/types.js';

export const GUARDRAIL_KINDS = ['pii', 'regex', 'keyword', 'max_length', 'json_schema', 'semantic'] as const;
export type GuardrailKind = (typeof GUARDRAIL_KINDS)[number];
export type GuardrailTarget = 'input' | 'output' | 'both';
export type GuardrailAction = 'block' | 'redact' | 'warn';

/** A guardrail as stored; `config` has the shape `guardrailConfigSchemas[kind]` describes. */
export interface Guardrail {
  name: string;
  kind: GuardrailKind;
  target: GuardrailTarget;
  action: GuardrailAction;
  config: Record<string, unknown>;
}

/** One guardrail that fired on one text. */
export interface GuardrailTrip {
  name: string;
  kind: GuardrailKind;
  action: GuardrailAction;
  target: 'input' | 'output';
  /** Human-readable; never the matched text itself (a pii detail names entity types and counts). */
  detail: string;
}

/** One call of a semantic guardrail's decision model, for the caller to add to the run's usage. */
export interface DecisionModelCall {
  guardrail: string;
  model: string;
  usage: TurnUsage;
}

export interface GuardrailOutcome {
  /** The text after every redaction (as far as evaluation got when it was blocked). */
  text: string;
  /** The first blocking trip; evaluation stopped there. */
  blocked: GuardrailTrip | null;
  /** Every trip (warn, redact and block), in guardrail order. */
  trips: GuardrailTrip[];
  /** Every decision-model call that returned (usage of a call that failed is not known). */
  decisionModelCalls: DecisionModelCall[];
}

export interface GuardrailOptions {
  /** Cancels a semantic guardrail's model call; evaluation rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Provider keys and addresses for semantic guardrails; defaults to the environment. */
  modelSettings?: ModelSettings;
  /** Decision model for semantic guardrails without `config.model`; defaults to env GUARDRAIL_MODEL. */
  defaultDecisionModel?: string;
  /** The names of the workspace's provider connections, which a decision model may name. */
  workspaceProviders?: ReadonlySet<string>;
}

/** Why a config cannot be used; `field` is a dotted path such as `config.pattern` or `config.keywords.3`. */
export interface GuardrailConfigProblem {
  field: string;
  message: string;
}
