import { expect } from 'chai';
import { CalculatorError, evaluateExpression, MAX_EXPRESSION_LENGTH, MAX_NESTING } from '../activities/tools/calculator.js';

function rejection(expression: string): CalculatorError {
  try {
    evaluateExpression(expression);
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(CalculatorError);
    return err as CalculatorError;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to be rejected`);
}

describe('tools: calculator', () => {
  const values: Array<[string, number]> = [
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['2 * 3 % 4', 2],
    ['-7 % 3', -1],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['- -3', 3],
    ['+4', 4],
    ['3 - -2', 5],
    ['1.5e3 + .5 + 2.', 1502.5],
    ['1E-3 * 1000', 1],
    ['pi', Math.PI],
    ['e', Math.E],
    ['2 * PI', 2 * Math.PI],
    ['sqrt(16) + abs(-2)', 6],
    ['floor(2.7) + ceil(2.1) + round(2.5)', 8],
    ['min(3, 1, 2) + max(4, 9)', 10],
    ['pow(2, 8)', 256],
    ['log(e ^ 2)', 2],
    ['log10(1000)', 3],
    ['exp(0)', 1],
    ['sin(0) + cos(0) + tan(0)', 1],
    ['sqrt( (3 ^ 2) + (4 ^ 2) )', 5],
    ['0 * -1', 0],
  ];
  for (const [expression, value] of values) {
    it(`${expression} = ${value}`, () => {
      expect(evaluateExpression(expression)).to.be.closeTo(value, 1e-12);
    });
  }

  it('answers 0, not -0', () => {
    expect(Object.is(evaluateExpression('0 * -1'), 0)).to.equal(true);
  });

  it('rejects bad syntax with the position', () => {
    expect(rejection('1 +').message).to.equal('the expression ends too early at position 4');
    expect(rejection('1 + * 2').message).to.equal("unexpected '*' at position 5");
    expect(rejection('(1 + 2').message).to.equal("expected ')' but found the end of the expression at position 7");
    expect(rejection('1 2').position).to.equal(3);
    expect(rejection('2pi').message).to.equal("unexpected 'pi' at position 2");
    expect(rejection('1 # 2').message).to.equal("unexpected character '#' at position 3");
    expect(rejection('  ').message).to.equal('the expression is empty');
    expect(rejection('max(1,)').message).to.equal("unexpected ')' at position 7");
  });

  it('rejects unknown identifiers and wrong argument counts', () => {
    expect(rejection('x + 1').message).to.match(/^unknown identifier 'x' at position 1; known: pi, e, sqrt/);
    expect(rejection('foo(1)').message).to.match(/^unknown function 'foo' at position 1/);
    expect(rejection('sqrt').message).to.equal('sqrt at position 1 is a function: call it as sqrt(…)');
    expect(rejection('pow(2)').message).to.equal('pow takes 2 arguments, got 1 (at position 1)');
    expect(rejection('sqrt(1, 2)').message).to.equal('sqrt takes 1 argument, got 2 (at position 1)');
  });

  it('rejects division by zero and results that are not finite numbers', () => {
    expect(rejection('1 / 0').message).to.equal('division by zero at position 3');
    expect(rejection('5 % (2 - 2)').message).to.equal('division by zero at position 3');
    expect(rejection('sqrt(-1)').message).to.equal('the result of sqrt at position 1 is not a finite number');
    expect(rejection('log(0)').message).to.match(/not a finite number/);
    expect(rejection('10 ^ 400').message).to.equal('the result of ^ at position 4 is not a finite number');
    expect(rejection('exp(1000)').message).to.match(/not a finite number/);
    expect(rejection('1e999').message).to.equal('the number 1e999 at position 1 is too large');
  });

  it(`rejects expressions over ${MAX_EXPRESSION_LENGTH} characters and nesting over ${MAX_NESTING} levels`, () => {
    expect(evaluateExpression('1+'.repeat(499) + '1')).to.equal(500);
    expect(rejection('1+'.repeat(500) + '1').message).to.equal('the expression is longer than 1000 characters');
    expect(evaluateExpression('('.repeat(MAX_NESTING) + '1' + ')'.repeat(MAX_NESTING))).to.equal(1);
    expect(rejection('('.repeat(MAX_NESTING + 1) + '1' + ')'.repeat(MAX_NESTING + 1)).message).to.match(/nests deeper than 100 levels/);
    expect(rejection('-'.repeat(MAX_NESTING + 1) + '1').message).to.match(/nests deeper than 100 levels/);
    expect(rejection('2^'.repeat(MAX_NESTING + 1) + '1').message).to.match(/nests deeper than 100 levels/);
  });

  it('is not a way into JavaScript', () => {
    for (const expression of [
      'constructor',
      '__proto__',
      'toString()',
      'constructor.constructor("return process")()',
      'process.exit(1)',
      'this',
      'globalThis',
      'hasOwnProperty(1)',
      'valueOf',
      'require("fs")',
      '[1]',
      '1; 2',
      '`1`',
      'a = 1',
      'sqrt.call(1)',
    ]) {
      rejection(expression);
    }
    expect(rejection('constructor').message).to.match(/^unknown identifier 'constructor'/);
    expect(rejection('__proto__').message).to.match(/^unknown identifier '__proto__'/);
    expect(rejection('hasOwnProperty(1)').message).to.match(/^unknown function 'hasOwnProperty'/);
  });
});
