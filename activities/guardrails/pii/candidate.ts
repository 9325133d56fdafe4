import type { Span } from '../spans.js';

/**
 * Text shaped like one kind of value. `valid` is false for a value of the right shape that fails its
 * check (an SSN in a never-issued range): it is not reported, but no other detector may claim it.
 */
export interface Candidate extends Span {
  valid: boolean;
}

/** Finds candidates in a text, in order and without overlaps. */
export type Detector = (text: string) => Candidate[];

/** Not preceded by a letter, digit or underscore: a value starts a token rather than ending one. */
export const TOKEN_START = String.raw`(?<![\p{L}\p{N}_])`;
/** Not followed by a letter, digit or underscore. */
export const TOKEN_END = String.raw`(?![\p{L}\p{N}_])`;

export function digitsOf(text: string): string {
  return text.replace(/\D/g, '');
}
