import { TOKEN_START, type Candidate } from './candidate.js';

// The local part starts a token (no scanning from inside a long word, which would be quadratic);
// the domain is dot-separated labels and a TLD of letters.
const EMAIL = new RegExp(
  TOKEN_START +
    String.raw`(?<![.%+-])[\p{L}\p{N}._%+-]{1,64}@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,63}(?![\p{L}\p{N}_-]|\.[\p{L}\p{N}])`,
  'gu',
);

export function findEmails(text: string): Candidate[] {
  return [...text.matchAll(EMAIL)].map((match) => ({ start: match.index, end: match.index + match[0].length, valid: true }));
}
