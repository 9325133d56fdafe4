import { RE2JS } from 're2js';
import type { Span } from '../guardrails/spans.js';
import { toRe2Syntax, UnsupportedRegexSyntax } from './re2-syntax.js';

/**
 * A tenant's regular expression, run by RE2's algorithm (the `re2js` package, plain JavaScript) in time
 * linear in the text: no pattern can hang a worker, whatever its shape (docs/regex.md has the
 * measurements behind the choice). The pattern is JavaScript's syntax and meaning, checked by V8's own
 * parser first and then rewritten for RE2 (re2-syntax.ts).
 */
export class LinearRegex {
  private constructor(private readonly program: RE2JS) {}

  /** Throws UnusableRegexError, whose message says why (after the field name: "is not a valid …"). */
  static compile(pattern: string, flags: string): LinearRegex {
    try {
      new RegExp(pattern, flags);
    } catch (err) {
      throw new UnusableRegexError(`is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}`);
    }
    let program: RE2JS;
    try {
      const re2 = toRe2Syntax(pattern, flags);
      const re2Flags = (flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0) | (re2.hasLookbehind ? RE2JS.LOOKBEHINDS : 0);
      program = RE2JS.compile(re2.source, re2Flags);
    } catch (err) {
      if (err instanceof UnsupportedRegexSyntax) throw new UnusableRegexError(err.message);
      throw new UnusableRegexError(`cannot run in linear time: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (program.programSize() > MAX_PROGRAM_SIZE) {
      throw new UnusableRegexError(`is too large (its program has ${program.programSize()} instructions, at most ${MAX_PROGRAM_SIZE} are allowed)`);
    }
    return new LinearRegex(program);
  }

  test(text: string): boolean {
    return this.program.test(text);
  }

  /**
   * The non-empty matches, as UTF-16 spans (empty matches cover nothing to flag). Each search is linear,
   * but a text can hold a match per character, and finding each leftmost match may read to the end of the
   * text, so listing them all can be quadratic: after `budgetMs` the listing stops, and `searchedTo` says
   * where the text was left unsearched (undefined when every match was listed).
   */
  spans(text: string, budgetMs: number): { spans: Span[]; searchedTo: number | undefined } {
    const spans: Span[] = [];
    const deadline = performance.now() + budgetMs;
    for (const match of this.program.matchAll(text)) {
      const start = match.index!;
      const end = start + match[0].length;
      if (end > start) spans.push({ start, end });
      if (performance.now() > deadline && end < text.length) return { spans, searchedTo: end };
    }
    return { spans, searchedTo: undefined };
  }
}

/** Why a pattern cannot be used; the message reads after the field's name. */
export class UnusableRegexError extends Error {
  override readonly name = 'UnusableRegexError';
}

/**
 * The engine's time per character grows with the size of the compiled program (at 20 000 characters a
 * program of 3 000 instructions took 0.3 s at worst), so programs are capped: a pattern of 1 000 characters
 * without large counted repetitions stays well below this.
 */
export const MAX_PROGRAM_SIZE = 2000;

/** Why `pattern` cannot be used with `flags` (a message that reads after the field's name), or undefined. */
export function linearRegexProblem(pattern: string, flags: string): string | undefined {
  try {
    LinearRegex.compile(pattern, flags);
    return undefined;
  } catch (err) {
    if (err instanceof UnusableRegexError) return err.message;
    throw err;
  }
}
