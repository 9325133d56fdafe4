import { parseModelId } from '../../models/model-id.js';
import { modelIdProblem } from '../../models/model-id-problem.js';
import { streamModelTurn } from '../../models/provider.js';
import type { LlmJudgeConfig } from './config-schemas.js';
import { parseJudgeAnswer } from './judge-answer.js';
import { judgeMessages, PLACEHOLDER, RUBRIC_PLACEHOLDERS } from './judge-prompt.js';
import { quoted, shortNumber } from './reason-text.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';
import { scorerName } from './scorer-name.js';
import type { ScorerConfigProblem } from './types.js';

/** Enough for a score and a few sentences; bounds what one judge call can cost. */
const JUDGE_MAX_OUTPUT_TOKENS = 1024;

/**
 * A model grades the output against the rubric, at temperature 0, and answers a score in [0, 1]
 * (default threshold 0.5). Every call is reported through `recordModelCall`, so that its cost counts
 * toward the experiment's even when the answer is unusable. A model that fails, or answers anything
 * but a score in [0, 1], is a scorer failure, not a low score. The `scripted` model answers the first
 * turn of `script` for every cell.
 */
export const llmJudgeScorer: ScorerDefinition<LlmJudgeConfig> = {
  readsOutput: true,

  problems(config, path, workspaceProviders) {
    const problems: ScorerConfigProblem[] = [];
    const id = parseModelId(config.model);
    const modelProblem = modelIdProblem(config.model, workspaceProviders);
    if (modelProblem) problems.push({ field: `${path}.model`, message: `is '${config.model}', ${modelProblem}` });
    if (id.provider === 'scripted' && !config.script) {
      problems.push({ field: `${path}.script`, message: 'is required with the scripted judge model' });
    }
    if (id.provider !== 'scripted' && config.script) {
      problems.push({ field: `${path}.script`, message: 'is only for the scripted judge model' });
    }
    const known: readonly string[] = RUBRIC_PLACEHOLDERS;
    const unknown = [...new Set([...config.rubric.matchAll(PLACEHOLDER)].map((match) => match[1]!))].filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      const names = unknown.map((name) => `{{${name}}}`).join(', ');
      problems.push({ field: `${path}.rubric`, message: `uses ${names}; the placeholders are {{input}}, {{output}} and {{expected}}` });
    }
    return problems;
  },

  expectedProblem: () => undefined,

  prepare(config) {
    const scripted = parseModelId(config.model).provider === 'scripted';
    return async (subject, context) => {
      const result = await streamModelTurn(
        {
          model: config.model,
          messages: judgeMessages(config.rubric, subject, outputOf(subject)),
          tools: [],
          temperature: 0,
          maxOutputTokens: JUDGE_MAX_OUTPUT_TOKENS,
          ...(scripted ? { script: config.script ?? [], scriptPosition: 0 } : {}),
        },
        { signal: context.signal, onTextDelta: () => {} },
        context.modelSettings,
      );
      context.recordModelCall({ scorer: scorerName(config), model: config.model, usage: result.usage });
      const answer = parseJudgeAnswer(result.text);
      if (!answer) throw new Error(`the judge model answered no score from 0 to 1: ${quoted(result.text, 120)}`);
      return verdict(config, answer.score, `the judge scored ${shortNumber(answer.score)}: ${answer.reason ?? 'it gave no reason'}`);
    };
  },
};
