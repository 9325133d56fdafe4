import type { ModelSettings } from '../models/settings.js';
import type { DecisionModelCall, GuardrailConfigProblem } from './types.js';

/** What a guardrail found in a text. */
export interface Finding {
  /** Human-readable; never the matched text of a pii finding. */
  detail: string;
  /** The text with the finding redacted, for action `redact`. */
  redact(): string;
}

export interface CheckContext {
  signal: AbortSignal;
  modelSettings: ModelSettings | undefined;
  defaultDecisionModel: string | undefined;
  guardrailName: string;
  recordDecisionModelCall(call: DecisionModelCall): void;
}

/** A prepared guardrail: undefined when the text passes. */
export type Check = (text: string, context: CheckContext) => Finding | undefined | Promise<Finding | undefined>;

export interface ConfigCheckContext {
  defaultDecisionModel: string | undefined;
  /** The names of the workspace's provider connections, which model ids may name too. */
  workspaceProviders?: ReadonlySet<string>;
}

/**
 * How one kind of guardrail works. Both functions take a config that the kind's JSON Schema accepted.
 * Method syntax on purpose: a definition for one config type stands in the registry of all of them.
 */
export interface GuardrailKindDefinition<Config> {
  /** What the schema cannot check; fields are paths such as `config.pattern`. */
  problems(config: Config, context: ConfigCheckContext): GuardrailConfigProblem[];
  /** Prepares the check once (compiling patterns and schemas), for a config without problems. */
  prepare(config: Config): Check;
}
