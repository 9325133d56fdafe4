import type { ToolCalledConfig } from './config-schemas.js';
import { shortNumber } from './reason-text.js';
import { verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * The fraction of `tools` the run called. A tool named twice must have been called twice. With
 * `ordered`, the tools must appear in that order, other calls allowed between them: each is looked
 * for after the one before it was found, and one that is not found there counts as missing.
 * Reads the run's tool calls, not its output, so it scores a run that ended without one.
 */
export const toolCalledScorer: ScorerDefinition<ToolCalledConfig> = {
  readsOutput: false,

  problems: () => [],

  expectedProblem: () => undefined,

  prepare(config) {
    const ordered = config.ordered ?? false;
    return (subject) => {
      const missing = ordered ? missingInOrder(config.tools, subject.toolCalls) : missingAnywhere(config.tools, subject.toolCalls);
      const score = (config.tools.length - missing.length) / config.tools.length;
      const inOrder = ordered ? ' in that order' : '';
      if (missing.length === 0) return verdict(config, score, `the run called ${config.tools.join(', ')}${inOrder}`);
      const called = subject.toolCalls.length === 0 ? 'no tools' : listed(subject.toolCalls);
      const lacking = `the run did not call ${missing.join(', ')}${ordered ? ' where the order needs it' : ''}`;
      return verdict(config, score, `${lacking} (score ${shortNumber(score)}); it called ${called}`);
    };
  },
};

function missingAnywhere(tools: string[], calls: string[]): string[] {
  const remaining = [...calls];
  return tools.filter((tool) => {
    const index = remaining.indexOf(tool);
    if (index === -1) return true;
    remaining.splice(index, 1);
    return false;
  });
}

function missingInOrder(tools: string[], calls: string[]): string[] {
  let position = 0;
  return tools.filter((tool) => {
    const index = calls.indexOf(tool, position);
    if (index === -1) return true;
    position = index + 1;
    return false;
  });
}

/** A run may call hundreds of tools; a reason names the first few. */
function listed(calls: string[]): string {
  const shown = calls.slice(0, 20).join(', ');
  return calls.length > 20 ? `${shown} and ${calls.length - 20} more` : shown;
}
