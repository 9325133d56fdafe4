import { evaluateExpression } from '../calculator.js';
import { objectSchema, requireString, type ActivityBuiltinTool } from './definition.js';

export const calculator: ActivityBuiltinTool = {
  runsIn: 'activity',
  description:
    'Evaluate an arithmetic expression, e.g. "(2 + 3) * sqrt(16)". Supports + - * / % ^, parentheses, pi, e, and sqrt, abs, floor, ceil, round, min, max, pow, log, log10, exp, sin, cos, tan.',
  parameters: objectSchema({ expression: { type: 'string', description: 'The expression to evaluate.' } }, ['expression']),
  async run(args) {
    return { result: evaluateExpression(requireString(args, 'expression')) };
  },
};
