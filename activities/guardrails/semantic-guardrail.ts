import { parseModelId } from '../models/model-id.js';
import { modelIdProblem } from '../models/model-id-problem.js';
import { streamModelTurn } from '../models/provider.js';
import { DEFAULT_SEMANTIC_THRESHOLD, type SemanticConfig } from './config-schemas.js';
import type { CheckContext, GuardrailKindDefinition } from './kind-definition.js';
import { parseScores } from './semantic-answer.js';
import { decisionPrompt, type SemanticStatement } from './semantic-prompt.js';
import { REDACTED } from './spans.js';
import type { GuardrailConfigProblem } from './types.js';

/** The environment variable naming the decision model of semantic guardrails that name none. */
export const GUARDRAIL_MODEL_ENV = 'GUARDRAIL_MODEL';

/**
 * Asks a decision model, once per guardrail and text, how strongly each statement holds (0 to 1); a
 * statement at or above its threshold trips the guardrail. When the model call fails or gives no
 * usable score for a statement, `failClosed` decides: trip, or let the text pass. Cancellation is not
 * a failure: it rejects. Redaction replaces the whole text, since a verdict has no span.
 */
export const semanticGuardrail: GuardrailKindDefinition<SemanticConfig> = {
  problems(config, { defaultDecisionModel, workspaceProviders }) {
    const problems: GuardrailConfigProblem[] = [];
    const model = config.model ?? defaultDecisionModel;
    if (!model) {
      return [{ field: 'config.model', message: `is required when the ${GUARDRAIL_MODEL_ENV} environment variable is not set` }];
    }
    const source = config.model ? 'is' : `defaults to ${GUARDRAIL_MODEL_ENV}, which is`;
    const id = parseModelId(model);
    const modelProblem = modelIdProblem(model, workspaceProviders);
    if (modelProblem) problems.push({ field: 'config.model', message: `${source} '${model}', ${modelProblem}` });
    if (id.provider === 'scripted' && !config.script) {
      problems.push({ field: 'config.script', message: 'is required with the scripted decision model' });
    }
    if (id.provider !== 'scripted' && config.script) {
      problems.push({ field: 'config.script', message: 'is only for the scripted decision model' });
    }
    return problems;
  },

  prepare(config) {
    const fallbackThreshold = config.threshold ?? DEFAULT_SEMANTIC_THRESHOLD;
    const statements: SemanticStatement[] = Object.entries(config.questions).map(([id, question]) =>
      typeof question === 'string'
        ? { id, instructions: question, threshold: fallbackThreshold }
        : { id, instructions: question.instructions, threshold: question.threshold ?? fallbackThreshold },
    );
    const failClosed = config.failClosed ?? false;

    return async (text, context) => {
      const decision = await decide(config, statements, text, context);
      if ('failure' in decision) {
        return failClosed ? { detail: `${decision.failure}; failClosed treats that as a trip`, redact: () => REDACTED } : undefined;
      }
      const held = statements.filter((statement) => (decision.scores.get(statement.id) ?? -1) >= statement.threshold);
      const unscored = statements.filter((statement) => !decision.scores.has(statement.id));
      if (held.length === 0 && !(failClosed && unscored.length > 0)) return undefined;

      const parts = held.map((s) => `${s.id} scored ${decision.scores.get(s.id)} (threshold ${s.threshold})`);
      if (unscored.length > 0) {
        const ids = unscored.map((statement) => statement.id).join(', ');
        parts.push(`the decision model gave no usable score for ${ids}${failClosed ? '; failClosed treats that as a trip' : ''}`);
      }
      return { detail: parts.join('; '), redact: () => REDACTED };
    };
  },
};

type Decision = { scores: Map<string, number> } | { failure: string };

async function decide(config: SemanticConfig, statements: SemanticStatement[], text: string, context: CheckContext): Promise<Decision> {
  const model = config.model ?? context.defaultDecisionModel;
  if (!model) return { failure: `no decision model: neither config.model nor ${GUARDRAIL_MODEL_ENV} is set` };
  try {
    const result = await streamModelTurn(
      {
        model,
        messages: decisionPrompt(statements, text, config.context),
        tools: [],
        temperature: 0,
        ...(parseModelId(model).provider === 'scripted' ? { script: config.script ?? [], scriptPosition: 0 } : {}),
      },
      { signal: context.signal, onTextDelta: () => {} },
      context.modelSettings,
    );
    context.recordDecisionModelCall({ guardrail: context.guardrailName, model, usage: result.usage });
    const scores = parseScores(result.text, statements.map((statement) => statement.id));
    if (scores.size === 0) return { failure: 'the decision model failed to answer with usable scores' };
    return { scores };
  } catch (err) {
    if (context.signal.aborted) throw err; // the activity was cancelled: not the model's failure
    return { failure: `the decision model failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}
