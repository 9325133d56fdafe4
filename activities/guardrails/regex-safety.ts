/**
 * A structural check of a tenant's regular expression, so that one pattern cannot hang a worker:
 * V8 matches by backtracking and a running match cannot be interrupted.
 *
 * Rejected, because they backtrack exponentially on a near-miss:
 *   - a repeated part (`*`, `+`, `{n,m}` with m > 1) that itself contains a quantifier of variable
 *     count, i.e. star height above 1: `(a+)+`, `(a*)*`, `(.*)*`, `(\d+\.)+`, `(a?){2,9}`;
 *   - a repeated group whose alternatives can start with the same character or match nothing:
 *     `(a|a)*`, `(\w|\d)+`, `(ab|a)+`, `(a|)+`;
 *   - backreferences (`\1`, `\k<name>`), which no linear analysis can bound.
 * Not caught: overlapping quantifiers side by side (`\d+\d+`, `.*a.*x`). They are polynomial, not
 * exponential, and the input bound of the regex guardrail keeps them finite (see regex-guardrail.ts).
 *
 * The pattern must already compile (`new RegExp(pattern, flags)`); the parser relies on that.
 */

/** Something that matches one character: a literal, an escape such as `\d`, a class, or `.`. */
interface CharAtom {
  type: 'char';
  source: string;
}
interface AssertionAtom {
  type: 'assertion';
}
interface GroupAtom {
  type: 'group';
  alternatives: Term[][];
  source: string;
}
/** Lookarounds match no characters, and JS never backtracks into one once it has matched. */
interface LookaroundAtom {
  type: 'lookaround';
  alternatives: Term[][];
}
interface BackreferenceAtom {
  type: 'backreference';
  source: string;
}
type Atom = CharAtom | AssertionAtom | GroupAtom | LookaroundAtom | BackreferenceAtom;

interface Term {
  atom: Atom;
  min: number;
  max: number;
}

/** Why the pattern could backtrack catastrophically, or undefined when its shape is safe. */
export function regexSafetyProblem(pattern: string, flags: string): string | undefined {
  const alternatives = new PatternParser(pattern, flags.includes('u')).parse();
  return new SafetyCheck(flags).problemIn(alternatives);
}

class PatternParser {
  private position = 0;

  constructor(
    private readonly pattern: string,
    private readonly unicode: boolean,
  ) {}

  parse(): Term[][] {
    return this.alternatives();
  }

  private alternatives(): Term[][] {
    const alternatives: Term[][] = [[]];
    while (this.position < this.pattern.length) {
      const char = this.pattern[this.position]!;
      if (char === ')') break;
      if (char === '|') {
        this.position++;
        alternatives.push([]);
        continue;
      }
      const atom = this.atom();
      const [min, max] = this.quantifier() ?? [1, 1];
      alternatives.at(-1)!.push({ atom, min, max });
    }
    return alternatives;
  }

  private atom(): Atom {
    const start = this.position;
    const char = this.pattern[this.position++]!;
    switch (char) {
      case '^':
      case '$':
        return { type: 'assertion' };
      case '.':
        return { type: 'char', source: '.' };
      case '[':
        this.skipClass();
        return { type: 'char', source: this.pattern.slice(start, this.position) };
      case '(':
        return this.group(start);
      case '\\':
        return this.escape(start);
      default: {
        // A whole code point, so that an astral character is one atom in `u` mode.
        const codePoint = this.pattern.codePointAt(start)!;
        if (this.unicode && codePoint > 0xffff) this.position++;
        return { type: 'char', source: this.pattern.slice(start, this.position) };
      }
    }
  }

  private group(start: number): Atom {
    const rest = this.pattern.slice(this.position);
    const prefix = /^\?(?::|=|!|<=|<!|<[^>]+>)/.exec(rest)?.[0] ?? '';
    this.position += prefix.length;
    const alternatives = this.alternatives();
    this.position++; // the closing parenthesis
    if (prefix === '?=' || prefix === '?!' || prefix === '?<=' || prefix === '?<!') return { type: 'lookaround', alternatives };
    return { type: 'group', alternatives, source: this.pattern.slice(start, this.position) };
  }

  private escape(start: number): Atom {
    const char = this.pattern[this.position++] ?? '';
    if (char === 'b' || char === 'B') return { type: 'assertion' };
    if (/[1-9]/.test(char)) {
      // Outside `u` mode `\8` or an out-of-range number is a literal, but a backreference is never safe to guess at.
      while (/\d/.test(this.pattern[this.position] ?? '')) this.position++;
      return { type: 'backreference', source: this.pattern.slice(start, this.position) };
    }
    if (char === 'k' && this.pattern[this.position] === '<') {
      this.position = this.pattern.indexOf('>', this.position) + 1 || this.pattern.length;
      return { type: 'backreference', source: this.pattern.slice(start, this.position) };
    }
    const rest = this.pattern.slice(this.position);
    const tail =
      char === 'u' ? (this.unicode ? /^(?:\{[0-9a-fA-F]+\}|[0-9a-fA-F]{4})/ : /^[0-9a-fA-F]{4}/).exec(rest)
      : char === 'x' ? /^[0-9a-fA-F]{2}/.exec(rest)
      : char === 'c' ? /^[a-zA-Z]/.exec(rest)
      : char === 'p' || char === 'P' ? /^\{[^}]*\}/.exec(rest)
      : char === '0' ? /^[0-7]{0,2}/.exec(rest)
      : null;
    this.position += tail?.[0].length ?? 0;
    return { type: 'char', source: this.pattern.slice(start, this.position) };
  }

  private skipClass(): void {
    while (this.position < this.pattern.length) {
      const char = this.pattern[this.position++];
      if (char === '\\') this.position++;
      else if (char === ']') return;
    }
  }

  /** `[min, max]` of a quantifier at the cursor (consumed with its lazy `?`), or undefined. */
  private quantifier(): [number, number] | undefined {
    const rest = this.pattern.slice(this.position);
    const match = /^(?:([*+?])|\{(\d+)(?:(,)(\d*))?\})\??/.exec(rest);
    if (!match) return undefined; // outside `u` mode a `{` that is no quantifier is a literal, parsed as an atom
    this.position += match[0].length;
    const [, symbol, min, comma, max] = match;
    if (symbol === '*') return [0, Infinity];
    if (symbol === '+') return [1, Infinity];
    if (symbol === '?') return [0, 1];
    const low = Number(min);
    return [low, comma === undefined ? low : max ? Number(max) : Infinity];
  }
}

/** Characters sampled to decide whether two first-character sets overlap: all of Latin, and one of each of several other scripts. */
const SAMPLE_CHARACTERS: string[] = [
  ...Array.from({ length: 0x250 }, (_, code) => String.fromCharCode(code)),
  ...[0x391, 0x3b1, 0x410, 0x430, 0x5d0, 0x627, 0x905, 0x2028, 0x3000, 0x3042, 0x4e00, 0xac00, 0xfeff, 0x1f600].map((code) =>
    String.fromCodePoint(code),
  ),
];

class SafetyCheck {
  constructor(private readonly flags: string) {}

  problemIn(alternatives: Term[][]): string | undefined {
    for (const term of alternatives.flat()) {
      const { atom } = term;
      if (atom.type === 'backreference') return `uses the backreference ${atom.source}, which can backtrack catastrophically`;
      if (atom.type === 'lookaround') {
        const inner = this.problemIn(atom.alternatives);
        if (inner) return inner;
      }
      if (atom.type !== 'group') continue;
      const inner = this.problemIn(atom.alternatives);
      if (inner) return inner;
      if (term.max <= 1) continue;
      if (this.ambiguous(atom.alternatives)) {
        return `repeats ${atom.source}, whose alternatives can match the same text (this backtracks catastrophically)`;
      }
      if (this.repeatsVariably(atom.alternatives)) {
        return `repeats ${atom.source}, which holds a quantifier itself (nested quantifiers backtrack catastrophically)`;
      }
    }
    return undefined;
  }

  /** Whether a part contains a quantifier of variable count, or an alternation that can match one text two ways. */
  private repeatsVariably(alternatives: Term[][]): boolean {
    if (alternatives.length > 1 && this.ambiguous(alternatives)) return true;
    return alternatives.some((terms) =>
      terms.some((term) => term.max > term.min || (term.atom.type === 'group' && this.repeatsVariably(term.atom.alternatives))),
    );
  }

  private ambiguous(alternatives: Term[][]): boolean {
    if (alternatives.length < 2) return false;
    if (alternatives.some((terms) => this.nullable(terms))) return true;
    // Two alternatives overlap when some sampled character can start both.
    const starters = alternatives.map((terms) => this.oneCharacter(this.firstCharacters(terms)));
    return SAMPLE_CHARACTERS.some((char) => starters.filter((starter) => starter?.test(char)).length > 1);
  }

  private nullable(terms: Term[]): boolean {
    return terms.every((term) => term.min === 0 || this.atomNullable(term.atom));
  }

  private atomNullable(atom: Atom): boolean {
    if (atom.type === 'assertion' || atom.type === 'lookaround') return true;
    if (atom.type === 'group') return atom.alternatives.some((terms) => this.nullable(terms));
    return false;
  }

  /** Sources of the atoms a match of `terms` can start with. */
  private firstCharacters(terms: Term[]): string[] {
    const sources: string[] = [];
    for (const term of terms) {
      const { atom } = term;
      if (atom.type === 'char' || atom.type === 'backreference') sources.push(atom.source);
      else if (atom.type === 'group') sources.push(...atom.alternatives.flatMap((inner) => this.firstCharacters(inner)));
      if (term.min > 0 && !this.atomNullable(atom)) break;
    }
    return sources;
  }

  /** A regex matching any one character the sources match; undefined when there are none. */
  private oneCharacter(sources: string[]): RegExp | undefined {
    if (sources.length === 0) return undefined;
    const flags = [...this.flags].filter((flag) => 'imsu'.includes(flag)).join('');
    try {
      return new RegExp(`^(?:${sources.join('|')})$`, flags);
    } catch {
      return /^[^]$/; // cannot tell (a backreference among them): assume it matches anything
    }
  }
}
