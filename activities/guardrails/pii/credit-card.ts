import { TOKEN_START, type Candidate } from './candidate.js';

/** Digits, single spaces or dashes between them, starting a token. */
const DIGIT_RUN = new RegExp(`${TOKEN_START}\\d(?:[ -]?\\d)*`, 'gu');
const LETTER_NEXT = /[\p{L}_]/u;

/**
 * Payment card numbers: 13 to 19 digits, grouped with spaces or dashes or not at all, that pass the
 * Luhn checksum (a 16-digit number failing it is no card). Grouped numbers are looked for along their
 * group boundaries, so two cards separated by one space are both found; within a card the separator
 * is always the same and every group but the last has at least 4 digits (4-4-4-4, 4-6-5). An
 * ungrouped run of digits is a card only as a whole.
 */
export function findCreditCards(text: string): Candidate[] {
  const cards: Candidate[] = [];
  for (const run of text.matchAll(DIGIT_RUN)) {
    if (LETTER_NEXT.test(text[run.index + run[0].length] ?? '')) continue; // part of an identifier such as `4111…abc`
    cards.push(...cardsInRun(run[0], run.index));
  }
  return cards;
}

function cardsInRun(run: string, offset: number): Candidate[] {
  const groups = [...run.matchAll(/\d+/g)].map((group) => ({
    start: offset + group.index,
    digits: group[0],
    separator: run[group.index - 1] ?? '',
  }));
  const cards: Candidate[] = [];
  let first = 0;
  while (first < groups.length) {
    const found = longestCardFrom(groups, first);
    if (found === undefined) {
      first++;
      continue;
    }
    const last = groups[found]!;
    cards.push({ start: groups[first]!.start, end: last.start + last.digits.length, valid: true });
    first = found + 1;
  }
  return cards;
}

/** Index of the last group of the longest card that starts at group `first`. */
function longestCardFrom(groups: Array<{ digits: string; separator: string }>, first: number): number | undefined {
  let digits = '';
  let found: number | undefined;
  for (let last = first; last < groups.length; last++) {
    const group = groups[last]!;
    if (last > first && (group.separator !== groups[first + 1]!.separator || groups[last - 1]!.digits.length < 4)) break;
    digits += group.digits;
    if (digits.length > 19) break;
    if (digits.length >= 13 && digits[0] !== '0' && passesLuhn(digits)) found = last;
  }
  return found;
}

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
