import { digitsOf, type Candidate } from './candidate.js';

/**
 * An optional `+country` and `(area)`, then digit groups: spaces between the first groups, then dots
 * or dashes (`+1 555-123-4567`, `(555) 123-4567`, `020 7946 0958`, `06.12.34.56.78`). Once a dot or
 * dash has been used a space ends the number, so a following number or date is not swallowed.
 */
const PHONE_SHAPE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_+.\/-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,15}(?: \d{1,15}){0,6}(?:[.-]\d{1,15}){0,6}(?![\p{L}\p{N}_]|[.\/-]\d)`,
  'gu',
);

/**
 * Phone numbers with 7 to 15 digits: international ones (leading `+`) in any grouping, national ones
 * only when grouped, since a bare run of digits is far more often an id or an amount. Groupings that
 * are something else are skipped: dates (`2024-01-15`, `15.01.2024`), decimals (`3.14159265`),
 * thousands (`1 234 567`), year ranges (`2019-2024`), IPv4 shapes and card-like 4-4-4 groupings.
 */
export function findPhones(text: string): Candidate[] {
  return [...text.matchAll(PHONE_SHAPE)]
    .filter((match) => isPhoneNumber(match[0]))
    .map((match) => ({ start: match.index, end: match.index + match[0].length, valid: true }));
}

function isPhoneNumber(candidate: string): boolean {
  const digits = digitsOf(candidate);
  if (digits.length < 7 || digits.length > 15) return false;
  if (candidate.startsWith('+')) return true;
  const groups = candidate.match(/\d+/g) ?? [];
  const lengths = groups.map((group) => group.length);
  const dotted = candidate.includes('.');
  if (groups.length < 2) return false;
  if (dotted && groups.length < 3) return false;
  if (candidate.startsWith('(')) return true;
  if (lengths.filter((n) => n === 1).length > 1) return false; // `1 2 3 4 5 6 7` is a list of numbers
  if (groups.length === 3 && ((lengths[0] === 4 && lengths[1]! <= 2 && lengths[2]! <= 2) || (lengths[0]! <= 2 && lengths[1]! <= 2 && lengths[2] === 4))) {
    return false; // a date
  }
  if (groups.length >= 3 && /^\d+(?:([ .])\d+)(?:\1\d+)*$/.test(candidate) && lengths[0]! <= 3 && lengths.slice(1).every((n) => n === 3)) {
    return false; // thousands separators
  }
  if (groups.length === 2 && groups.every((group) => /^(?:19|20)\d\d$/.test(group))) return false; // a year range
  if (dotted && groups.length === 4 && lengths.every((n) => n <= 3)) return false; // an IPv4 shape
  if (digits.length >= 13 && lengths.slice(0, 3).every((n) => n === 4)) return false; // a card-like grouping
  return true;
}
