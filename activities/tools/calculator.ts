import { ToolError } from './errors.js';

/**
 * The calculator tool: arithmetic on numbers, nothing else. A tokenizer and a recursive-descent
 * parser that evaluates as it parses; no `eval`, and names resolve only through the tables below, so
 * `constructor` or `__proto__` are unknown identifiers like any other.
 *
 *   expression := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '%') unary)*
 *   unary      := ('+' | '-') unary | power
 *   power      := primary (('^' | '**') unary)?         right-associative; -2^2 is -4, 2^-1 is 0.5
 *   primary    := number | constant | function '(' expression (',' expression)* ')' | '(' expression ')'
 */

export const MAX_EXPRESSION_LENGTH = 1000;
export const MAX_NESTING = 100;

/** A bad expression; `position` (1-based) points at the offending character when there is one. */
export class CalculatorError extends ToolError {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message, false);
  }
}

const CONSTANTS = new Map<string, number>([
  ['pi', Math.PI],
  ['e', Math.E],
]);

interface MathFunction {
  minArgs: number;
  maxArgs: number;
  apply: (...args: number[]) => number;
}

const unary = (apply: (x: number) => number): MathFunction => ({ minArgs: 1, maxArgs: 1, apply });

const FUNCTIONS = new Map<string, MathFunction>([
  ['sqrt', unary(Math.sqrt)],
  ['abs', unary(Math.abs)],
  ['floor', unary(Math.floor)],
  ['ceil', unary(Math.ceil)],
  ['round', unary(Math.round)],
  ['min', { minArgs: 1, maxArgs: Infinity, apply: Math.min }],
  ['max', { minArgs: 1, maxArgs: Infinity, apply: Math.max }],
  ['pow', { minArgs: 2, maxArgs: 2, apply: Math.pow }],
  ['log', unary(Math.log)],
  ['log10', unary(Math.log10)],
  ['exp', unary(Math.exp)],
  ['sin', unary(Math.sin)],
  ['cos', unary(Math.cos)],
  ['tan', unary(Math.tan)],
]);

/** Evaluates an arithmetic expression such as `2 * (3 + sqrt(16)) ^ 2 % 7`; throws CalculatorError. */
export function evaluateExpression(expression: string): number {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new CalculatorError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  }
  if (!expression.trim()) throw new CalculatorError('the expression is empty');
  const value = new Parser(tokenize(expression)).parse();
  return value === 0 ? 0 : value; // no -0 in answers
}

type Token =
  | { kind: 'number'; value: number; text: string; position: number }
  | { kind: 'name' | 'symbol'; text: string; position: number }
  | { kind: 'end'; text: ''; position: number };

const SPACE = /\s+/y;
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const SYMBOL = /\*\*|[-+*/%^(),]/y;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  const take = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = index;
    const match = pattern.exec(source);
    if (match) index = pattern.lastIndex;
    return match?.[0];
  };
  while (index < source.length) {
    const position = index + 1;
    if (take(SPACE) !== undefined) continue;
    const number = take(NUMBER);
    if (number !== undefined) {
      const value = Number(number);
      if (!Number.isFinite(value)) throw new CalculatorError(`the number ${number} at position ${position} is too large`, position);
      tokens.push({ kind: 'number', value, text: number, position });
      continue;
    }
    const name = take(NAME);
    if (name !== undefined) {
      tokens.push({ kind: 'name', text: name, position });
      continue;
    }
    const symbol = take(SYMBOL);
    if (symbol !== undefined) {
      tokens.push({ kind: 'symbol', text: symbol, position });
      continue;
    }
    throw new CalculatorError(`unexpected character '${source[index]}' at position ${position}`, position);
  }
  tokens.push({ kind: 'end', text: '', position: source.length + 1 });
  return tokens;
}

class Parser {
  private next = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.expression();
    const rest = this.peek();
    if (rest.kind !== 'end') throw unexpected(rest);
    return value;
  }

  private expression(): number {
    let value = this.term();
    for (let op = this.peek(); op.text === '+' || op.text === '-'; op = this.peek()) {
      this.advance();
      const right = this.term();
      value = finite(op.text === '+' ? value + right : value - right, op);
    }
    return value;
  }

  private term(): number {
    let value = this.unary();
    for (let op = this.peek(); op.text === '*' || op.text === '/' || op.text === '%'; op = this.peek()) {
      this.advance();
      const right = this.unary();
      if (op.text !== '*' && right === 0) throw new CalculatorError(`division by zero at position ${op.position}`, op.position);
      value = finite(op.text === '*' ? value * right : op.text === '/' ? value / right : value % right, op);
    }
    return value;
  }

  private unary(): number {
    const sign = this.peek();
    if (sign.text === '+' || sign.text === '-') {
      this.advance();
      const operand = this.nested(() => this.unary());
      return sign.text === '-' ? -operand : operand;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    const op = this.peek();
    if (op.text !== '^' && op.text !== '**') return base;
    this.advance();
    const exponent = this.nested(() => this.unary());
    return finite(base ** exponent, op);
  }

  private primary(): number {
    const token = this.advance();
    if (token.kind === 'number') return token.value;
    if (token.text === '(') {
      const value = this.nested(() => this.expression());
      this.expect(')');
      return value;
    }
    if (token.kind === 'name') return this.peek().text === '(' ? this.call(token) : constant(token);
    throw unexpected(token);
  }

  private call(name: Token): number {
    const fn = FUNCTIONS.get(name.text.toLowerCase());
    if (!fn) throw unknownIdentifier(name, 'function');
    this.expect('(');
    const args = [this.nested(() => this.expression())];
    while (this.peek().text === ',') {
      this.advance();
      args.push(this.nested(() => this.expression()));
    }
    this.expect(')');
    if (args.length < fn.minArgs || args.length > fn.maxArgs) {
      const wanted = fn.maxArgs === Infinity ? `at least ${fn.minArgs}` : fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : `${fn.minArgs} to ${fn.maxArgs}`;
      throw new CalculatorError(`${name.text} takes ${wanted} argument${wanted === '1' ? '' : 's'}, got ${args.length} (at position ${name.position})`, name.position);
    }
    return finite(fn.apply(...args), name);
  }

  /** Counts nesting so that a hostile `((((…` stops with a clear error instead of a stack overflow. */
  private nested(parse: () => number): number {
    if (++this.depth > MAX_NESTING) {
      const at = this.peek().position;
      throw new CalculatorError(`the expression nests deeper than ${MAX_NESTING} levels (at position ${at})`, at);
    }
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private expect(text: string): void {
    const token = this.advance();
    if (token.text !== text) throw unexpected(token, `'${text}'`);
  }

  private peek(): Token {
    return this.tokens[this.next]!;
  }

  private advance(): Token {
    const token = this.tokens[this.next]!;
    if (token.kind !== 'end') this.next++;
    return token;
  }
}

function constant(token: Token): number {
  const value = CONSTANTS.get(token.text.toLowerCase());
  if (value !== undefined) return value;
  if (FUNCTIONS.has(token.text.toLowerCase())) {
    throw new CalculatorError(`${token.text} at position ${token.position} is a function: call it as ${token.text}(…)`, token.position);
  }
  throw unknownIdentifier(token, 'identifier');
}

function finite(value: number, at: Token): number {
  if (!Number.isFinite(value)) {
    throw new CalculatorError(`the result of ${at.text} at position ${at.position} is not a finite number`, at.position);
  }
  return value;
}

function unexpected(token: Token, expected?: string): CalculatorError {
  const found = token.kind === 'end' ? 'the end of the expression' : `'${token.text}'`;
  const message = expected ? `expected ${expected} but found ${found}` : token.kind === 'end' ? 'the expression ends too early' : `unexpected ${found}`;
  return new CalculatorError(`${message} at position ${token.position}`, token.position);
}

function unknownIdentifier(token: Token, what: string): CalculatorError {
  const known = [...CONSTANTS.keys(), ...FUNCTIONS.keys()].join(', ');
  return new CalculatorError(`unknown ${what} '${token.text}' at position ${token.position}; known: ${known}`, token.position);
}
