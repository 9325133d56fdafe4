/**
 * Rewrites a JavaScript regular expression, already accepted by `new RegExp(pattern, flags)`, into RE2's
 * syntax with the same meaning, for the linear-time engine (linear-regex.ts). What RE2 cannot do in
 * linear time is refused with UnsupportedRegexSyntax: lookahead, backreferences, legacy octal escapes.
 *
 * Where the two syntaxes read the same text differently, the JavaScript meaning is spelt out:
 * `\s` and `.` become the classes JavaScript means by them, every literal becomes `\x{…}`, and a
 * non-`u` identity escape (`\A`, `\z`) stays the letter it is in JavaScript. Capturing groups become
 * non-capturing: no caller reads a group, and RE2 refuses captures inside a lookbehind.
 *
 * Known differences, none of which an ordinary pattern meets (docs/regex.md): matching is by code
 * point as with the `u` flag; with `m`, `^` and `$` see only `\n` as a line break; case folding is
 * Unicode's simple folding with or without `u`.
 */
export class UnsupportedRegexSyntax extends Error {
  override readonly name = 'UnsupportedRegexSyntax';
}

export interface Re2Pattern {
  source: string;
  /** RE2 needs a flag of its own for lookbehinds. */
  hasLookbehind: boolean;
}

export function toRe2Syntax(pattern: string, flags: string): Re2Pattern {
  const translator = new Translator(pattern, flags);
  const source = translator.translate();
  return { source, hasLookbehind: translator.hasLookbehind };
}

interface Mode {
  dotAll: boolean;
  multiline: boolean;
}

/** One item of a character class: a single character (a range may end at it), or a set such as `\d`. */
interface ClassAtom {
  text: string;
  codePoint?: number;
}

const LINE_TERMINATORS = '\\x{A}\\x{D}\\x{2028}\\x{2029}';
const ALL_CODE_POINTS = '\\x{0}-\\x{10FFFF}';

/** What JavaScript's `\s` matches, asked of the engine itself (there is no whitespace beyond the BMP). */
const WHITESPACE_RANGES = rangesWhere((codePoint) => /\s/.test(String.fromCharCode(codePoint)), 0xffff);
const WHITESPACE = classItems(WHITESPACE_RANGES);
const NOT_WHITESPACE = classItems(complement(WHITESPACE_RANGES));

/** General_Category long names JavaScript accepts beside the short ones RE2 knows. */
const GENERAL_CATEGORY_SHORT_NAMES: Record<string, string> = {
  Letter: 'L', Cased_Letter: 'LC', Uppercase_Letter: 'Lu', Lowercase_Letter: 'Ll', Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm', Other_Letter: 'Lo', Mark: 'M', Combining_Mark: 'M', Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc', Enclosing_Mark: 'Me', Number: 'N', Decimal_Number: 'Nd', digit: 'Nd', Letter_Number: 'Nl',
  Other_Number: 'No', Punctuation: 'P', punct: 'P', Connector_Punctuation: 'Pc', Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps', Close_Punctuation: 'Pe', Initial_Punctuation: 'Pi', Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po', Symbol: 'S', Math_Symbol: 'Sm', Currency_Symbol: 'Sc', Modifier_Symbol: 'Sk',
  Other_Symbol: 'So', Separator: 'Z', Space_Separator: 'Zs', Line_Separator: 'Zl', Paragraph_Separator: 'Zp',
  Other: 'C', Control: 'Cc', cntrl: 'Cc', Format: 'Cf', Surrogate: 'Cs', Private_Use: 'Co', Unassigned: 'Cn',
};

class Translator {
  hasLookbehind = false;
  private position = 0;
  private mode: Mode;
  private readonly enclosingModes: Mode[] = [];
  private readonly unicode: boolean;
  /** Outside `u` mode `\k` is a backreference only when the pattern names a group. */
  private readonly namesGroups: boolean;

  constructor(
    private readonly pattern: string,
    flags: string,
  ) {
    this.unicode = flags.includes('u');
    this.mode = { dotAll: flags.includes('s'), multiline: flags.includes('m') };
    this.namesGroups = /\(\?<(?![=!])/.test(pattern);
  }

  translate(): string {
    let out = '';
    while (this.position < this.pattern.length) out += this.term();
    return out || '(?:)';
  }

  private term(): string {
    const char = this.pattern[this.position]!;
    switch (char) {
      case '|':
        this.position++;
        return '|';
      case '(':
        return this.groupOpening();
      case ')':
        this.position++;
        this.mode = this.enclosingModes.pop() ?? this.mode;
        return ')';
      case '[':
        return this.characterClass();
      case '.':
        this.position++;
        return this.mode.dotAll ? '(?s:.)' : `[^${LINE_TERMINATORS}]`;
      case '^':
      case '$':
        this.position++;
        return this.mode.multiline ? `(?m:${char})` : char;
      case '*':
      case '+':
      case '?':
        this.position++;
        return char;
      case '{': {
        // Outside `u` mode a brace that starts no quantifier is a literal.
        const quantifier = /^\{\d+(?:,\d*)?\}/.exec(this.pattern.slice(this.position))?.[0];
        if (quantifier === undefined) return this.literalAt();
        this.position += quantifier.length;
        return quantifier;
      }
      case '\\':
        return this.escape();
      default:
        return this.literalAt();
    }
  }

  private groupOpening(): string {
    const rest = this.pattern.slice(this.position);
    if (rest.startsWith('(?=') || rest.startsWith('(?!')) {
      throw new UnsupportedRegexSyntax(`uses the lookahead ${rest.slice(0, 3)}…), which no linear-time engine runs`);
    }
    this.enclosingModes.push(this.mode);
    const lookbehind = /^\(\?<[=!]/.exec(rest)?.[0];
    if (lookbehind) {
      this.position += lookbehind.length;
      this.hasLookbehind = true;
      return lookbehind;
    }
    const named = /^\(\?<[^>]+>/.exec(rest)?.[0];
    if (named) {
      this.position += named.length;
      return '(?:';
    }
    const modifiers = /^\(\?([ims]*)(?:-([ims]*))?:/.exec(rest);
    if (modifiers) {
      this.position += modifiers[0].length;
      const [, on = '', off = ''] = modifiers;
      this.mode = {
        dotAll: on.includes('s') || (!off.includes('s') && this.mode.dotAll),
        multiline: on.includes('m') || (!off.includes('m') && this.mode.multiline),
      };
      return on.includes('i') ? '(?i:' : off.includes('i') ? '(?-i:' : '(?:';
    }
    this.position++;
    return '(?:';
  }

  private escape(): string {
    const next = this.pattern[this.position + 1] ?? '';
    switch (next) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 'b':
      case 'B':
        this.position += 2;
        return `\\${next}`;
      case 's':
        this.position += 2;
        return `[${WHITESPACE}]`;
      case 'S':
        this.position += 2;
        return `[^${WHITESPACE}]`;
      case 'p':
      case 'P':
        if (!this.unicode) break;
        return this.propertyClass(false);
      case 'k':
        if (this.unicode || this.namesGroups) throw this.backreference();
        break;
      default:
        if (/[1-9]/.test(next)) throw this.backreference();
    }
    const codePoint = this.characterEscape(false);
    return codePoint === undefined ? this.identityEscape() : literal(codePoint);
  }

  /**
   * The character a `\…` escape at the cursor stands for (consumed), or undefined (nothing consumed)
   * when it is an identity escape. Shared by classes, where `\b` is a backspace.
   */
  private characterEscape(inClass: boolean): number | undefined {
    const next = this.pattern[this.position + 1] ?? '';
    const after = this.pattern.slice(this.position + 2);
    const controls: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
    if (next in controls) {
      this.position += 2;
      return controls[next];
    }
    if (inClass && next === 'b') {
      this.position += 2;
      return 0x08;
    }
    if (next === '0' || (inClass && /[1-9]/.test(next))) {
      if (/^\d/.test(next === '0' ? after : next)) throw new UnsupportedRegexSyntax('uses a legacy octal escape; write \\x.. or \\u.... instead');
      this.position += 2;
      return 0;
    }
    if (next === 'c') {
      const letter = (inClass && !this.unicode ? /^[A-Za-z0-9_]/ : /^[A-Za-z]/).exec(after)?.[0];
      if (letter === undefined) return undefined;
      this.position += 3;
      return letter.charCodeAt(0) % 32;
    }
    if (next === 'x') {
      const hex = /^[0-9A-Fa-f]{2}/.exec(after)?.[0];
      if (hex === undefined) return undefined;
      this.position += 4;
      return parseInt(hex, 16);
    }
    if (next === 'u') return this.unicodeEscape(after);
    return undefined;
  }

  private unicodeEscape(after: string): number | undefined {
    const braced = this.unicode ? /^\{([0-9A-Fa-f]+)\}/.exec(after) : null;
    if (braced) {
      this.position += 2 + braced[0].length;
      return parseInt(braced[1]!, 16);
    }
    const hex = /^[0-9A-Fa-f]{4}/.exec(after)?.[0];
    if (hex === undefined) return undefined;
    this.position += 6;
    const unit = parseInt(hex, 16);
    // A surrogate pair written as two escapes is the one character it encodes.
    const low = /^\\u(D[C-Fc-f][0-9A-Fa-f]{2})/.exec(this.pattern.slice(this.position))?.[1];
    if (unit >= 0xd800 && unit <= 0xdbff && low !== undefined) {
      this.position += 6;
      return 0x10000 + ((unit - 0xd800) << 10) + (parseInt(low, 16) - 0xdc00);
    }
    return unit;
  }

  /** `\` followed by a character that stands for itself; outside `u` mode that can be any character but `c`. */
  private identityEscape(): string {
    if (this.pattern[this.position + 1] === 'c') {
      this.position += 1; // `\c` without a letter is a backslash, and the `c` a literal of its own
      return literal(0x5c);
    }
    this.position += 1;
    return this.literalAt();
  }

  /** `\p{…}`/`\P{…}` at the cursor: in RE2's spelling, bracketed unless it stands inside a class already. */
  private propertyClass(inClass: boolean): string {
    const negated = this.pattern[this.position + 1] === 'P';
    const body = /^\{([^}]*)\}/.exec(this.pattern.slice(this.position + 2))![1]!;
    this.position += 2 + body.length + 2;
    const [key, value] = body.includes('=') ? body.split('=') : [undefined, body];
    let name = value!;
    if (key === 'General_Category' || key === 'gc' || key === undefined) name = GENERAL_CATEGORY_SHORT_NAMES[name] ?? name;
    else if (key !== 'Script' && key !== 'sc') throw new UnsupportedRegexSyntax(`uses \\p{${body}}, which the linear-time engine does not know`);
    if (name === 'ASCII') {
      const ranges = negated ? '\\x{80}-\\x{10FFFF}' : '\\x{0}-\\x{7F}';
      return inClass ? ranges : `[${ranges}]`;
    }
    return `\\${negated ? 'P' : 'p'}{${name}}`;
  }

  private characterClass(): string {
    this.position++;
    const negated = this.pattern[this.position] === '^';
    if (negated) this.position++;
    if (this.pattern[this.position] === ']') {
      this.position++;
      return negated ? '(?s:.)' : `[^${ALL_CODE_POINTS}]`;
    }
    let items = '';
    while (this.pattern[this.position] !== ']') {
      const first = this.classAtom();
      const isRange = this.pattern[this.position] === '-' && this.pattern[this.position + 1] !== ']';
      if (!isRange) {
        items += first.text;
        continue;
      }
      this.position++;
      const last = this.classAtom();
      // Outside `u` mode a dash beside a set such as `\d` is a literal dash.
      items += first.codePoint !== undefined && last.codePoint !== undefined ? `${first.text}-${last.text}` : `${first.text}${literal(0x2d)}${last.text}`;
    }
    this.position++;
    return `[${negated ? '^' : ''}${items}]`;
  }

  private classAtom(): ClassAtom {
    if (this.pattern[this.position] !== '\\') {
      const codePoint = this.pattern.codePointAt(this.position)!;
      this.position += codePoint > 0xffff ? 2 : 1;
      return { text: literal(codePoint), codePoint };
    }
    const next = this.pattern[this.position + 1] ?? '';
    if ('dDwW'.includes(next)) {
      this.position += 2;
      return { text: `\\${next}` };
    }
    if (next === 's' || next === 'S') {
      this.position += 2;
      return { text: next === 's' ? WHITESPACE : NOT_WHITESPACE };
    }
    if ((next === 'p' || next === 'P') && this.unicode) return { text: this.propertyClass(true) };
    const codePoint = this.characterEscape(true);
    if (codePoint !== undefined) return { text: literal(codePoint), codePoint };
    if (next === 'c') {
      this.position += 1;
      return { text: literal(0x5c), codePoint: 0x5c };
    }
    const escaped = this.pattern.codePointAt(this.position + 1)!;
    this.position += escaped > 0xffff ? 3 : 2;
    return { text: literal(escaped), codePoint: escaped };
  }

  /** The character at the cursor, consumed, as an RE2 literal. */
  private literalAt(): string {
    const codePoint = this.pattern.codePointAt(this.position)!;
    this.position += codePoint > 0xffff ? 2 : 1;
    return literal(codePoint);
  }

  private backreference(): UnsupportedRegexSyntax {
    const reference = /^\\(?:\d+|k<[^>]*>)/.exec(this.pattern.slice(this.position))?.[0] ?? '\\k';
    return new UnsupportedRegexSyntax(`uses the backreference ${reference}, which no linear-time engine runs`);
  }
}

/** Letters and digits as they are; anything else as `\x{…}`, which means the same in and out of a class. */
function literal(codePoint: number): string {
  const char = String.fromCodePoint(codePoint);
  return /^[A-Za-z0-9]$/.test(char) ? char : `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

type Range = [number, number];

function rangesWhere(matches: (codePoint: number) => boolean, last: number): Range[] {
  const ranges: Range[] = [];
  for (let codePoint = 0; codePoint <= last; codePoint++) {
    if (!matches(codePoint)) continue;
    const previous = ranges.at(-1);
    if (previous && previous[1] === codePoint - 1) previous[1] = codePoint;
    else ranges.push([codePoint, codePoint]);
  }
  return ranges;
}

function complement(ranges: Range[]): Range[] {
  const result: Range[] = [];
  let next = 0;
  for (const [start, end] of ranges) {
    if (start > next) result.push([next, start - 1]);
    next = end + 1;
  }
  if (next <= 0x10ffff) result.push([next, 0x10ffff]);
  return result;
}

function classItems(ranges: Range[]): string {
  return ranges.map(([start, end]) => (start === end ? literal(start) : `${literal(start)}-${literal(end)}`)).join('');
}
