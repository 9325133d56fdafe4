import { Decimal } from 'decimal.js';
import type { NumericConfig } from './config-schemas.js';
import { outputOf, verdict, type ScorerDefinition } from './scorer-definition.js';

/**
 * A number as people write it: an optional sign, digits with optional thousands separators
 * (`1,234,567`), decimals, an exponent. A sign glued to a word (`item-3`) is not a sign.
 */
const NUMBER = /(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-+]?\.\d+(?:[eE][-+]?\d+)?|\d+(?:\.\d+)?/;
const WHOLE_NUMBER = new RegExp(`^(?:${NUMBER.source})$`);

/**
 * 1 when the first number in the output is within `tolerance` (absolute, default 0) or
 * `relative_tolerance` (a fraction of the expected number) of the expected number, else 0. Compared
 * as exact decimals, so `0.3` equals 0.1 + 0.2 written out and `42.0` equals 42.
 */
export const numericScorer: ScorerDefinition<NumericConfig> = {
  readsOutput: true,

  problems: () => [],

  expectedProblem(_config, expected) {
    return expectedNumber(expected) ? undefined : 'must be a number or a numeric string';
  },

  prepare(config) {
    const tolerance = new Decimal(config.tolerance ?? 0);
    const relativeTolerance = config.relative_tolerance === undefined ? undefined : new Decimal(config.relative_tolerance);

    return (subject) => {
      const wanted = expectedNumber(subject.expected);
      if (!wanted) throw new Error('the case has no expected number (a number or a numeric string) to compare with');
      const found = NUMBER.exec(outputOf(subject))?.[0];
      if (found === undefined) return verdict(config, 0, 'the output holds no number');
      const actual = decimalOf(found);
      const difference = actual.minus(wanted).abs();
      const allowed = relativeTolerance ? Decimal.max(tolerance, relativeTolerance.times(wanted.abs())) : tolerance;
      const within = difference.lessThanOrEqualTo(allowed);
      const comparison = `the output's first number ${actual.toString()} ${within ? 'is' : 'is not'} within ${allowed.toString()} of ${wanted.toString()}`;
      return verdict(config, within ? 1 : 0, `${comparison} (difference ${difference.toString()})`);
    };
  },
};

function expectedNumber(expected: unknown): Decimal | undefined {
  if (typeof expected === 'number') return Number.isFinite(expected) ? new Decimal(expected) : undefined;
  if (typeof expected === 'string' && WHOLE_NUMBER.test(expected.trim())) return decimalOf(expected.trim());
  return undefined;
}

function decimalOf(text: string): Decimal {
  return new Decimal(text.replace(/,/g, '').replace(/^\+/, ''));
}
