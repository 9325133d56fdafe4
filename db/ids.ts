import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

let lastTime = -1;
let lastRandom: number[] = [];

/**
 * A prefixed, time-sortable id such as `agt_01JD2X5J8Z3M9Q0W4E7R6T5Y1U`: a ULID (48-bit millisecond
 * time, then 80 random bits, Crockford base32) after the resource prefix. Ids made in the same
 * millisecond by this process increase monotonically, so sorting by id is sorting by creation.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now <= lastTime) {
    incrementRandom(lastRandom);
  } else {
    lastTime = now;
    lastRandom = [...randomBytes(RANDOM_CHARS)].map((b) => b % 32);
  }
  return `${prefix}_${encodeTime(lastTime)}${lastRandom.map((d) => CROCKFORD[d]).join('')}`;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < TIME_CHARS; i++) {
    out = CROCKFORD[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function incrementRandom(digits: number[]): void {
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i]! < 31) {
      digits[i]!++;
      return;
    }
    digits[i] = 0;
  }
}
