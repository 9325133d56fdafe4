import { TOKEN_START, type Candidate } from './candidate.js';

/** IBAN lengths by country (SWIFT IBAN registry); other country codes may have any length from 15 to 34. */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21, CR: 22,
  CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18, FR: 27, GB: 22,
  GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30,
  KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27,
  MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33,
  SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29,
  VA: 22, VG: 24, XK: 20, YE: 30,
};
const MIN_LENGTH = 15;
const MAX_LENGTH = 34;

/** Country code, check digits, then letters and digits with single spaces allowed between them. */
const IBAN_SHAPE = new RegExp(`${TOKEN_START}[A-Za-z]{2}\\d{2}(?: ?[A-Za-z0-9]){${MIN_LENGTH - 4},${MAX_LENGTH - 4}}`, 'gu');
const ALPHANUMERIC = /[A-Za-z0-9]/;

/**
 * IBANs, printed (`DE89 3704 0044 0532 0130 00`) or electronic, in upper or lower case: the length
 * must fit the country and the mod-97 check must hold. The shape above may run on into the next
 * words, so the IBAN is cut at its country's length and must end where a word ends. One of a known
 * country's length that fails the check is claimed as invalid, so its digits are not read as a card.
 */
export function findIbans(text: string): Candidate[] {
  const ibans: Candidate[] = [];
  const shape = new RegExp(IBAN_SHAPE); // own lastIndex: this search moves it by hand
  let match: RegExpExecArray | null;
  while ((match = shape.exec(text)) !== null) {
    const found = ibanAt(text, match.index, match[0]);
    if (found) {
      ibans.push(found);
      shape.lastIndex = found.end;
    } else {
      shape.lastIndex = match.index + 1;
    }
  }
  return ibans;
}

function ibanAt(text: string, start: number, shaped: string): Candidate | undefined {
  // Where each of the candidate's letters and digits ends in the text.
  const ends: number[] = [];
  let characters = '';
  for (let i = 0; i < shaped.length; i++) {
    if (shaped[i] === ' ') continue;
    characters += shaped[i]!.toUpperCase();
    ends.push(start + i + 1);
  }
  const known = IBAN_LENGTHS[characters.slice(0, 2)];
  const lengths = known ? [known] : Array.from({ length: MAX_LENGTH - MIN_LENGTH + 1 }, (_, i) => MAX_LENGTH - i);
  for (const length of lengths) {
    const end = ends[length - 1];
    if (end === undefined || ALPHANUMERIC.test(text[end] ?? '')) continue;
    const valid = passesMod97(characters.slice(0, length));
    if (valid || known) return { start, end, valid };
  }
  return undefined;
}

/** ISO 13616: the country code and check digits moved to the end, letters as 10..35, mod 97 is 1. */
export function passesMod97(iban: string): boolean {
  const checkDigits = Number(iban.slice(2, 4));
  if (checkDigits < 2 || checkDigits > 98) return false;
  let remainder = 0;
  for (const char of iban.slice(4) + iban.slice(0, 4)) {
    const value = parseInt(char, 36);
    remainder = (value < 10 ? remainder * 10 + value : remainder * 100 + value) % 97;
  }
  return remainder === 1;
}
