import { TOKEN_END, TOKEN_START, type Candidate } from './candidate.js';

const SSN_SHAPE = new RegExp(`${TOKEN_START}(?<!-)(\\d{3})-(\\d{2})-(\\d{4})${TOKEN_END}(?!-\\d)`, 'gu');

/**
 * US social security numbers written `AAA-GG-SSSS`. Numbers in ranges never issued (area 000, 666 or
 * 9xx, group 00, serial 0000) are claimed but invalid, so they are not reported as a phone either.
 */
export function findUsSsns(text: string): Candidate[] {
  return [...text.matchAll(SSN_SHAPE)].map((match) => {
    const [, area = '', group = '', serial = ''] = match;
    const valid = area !== '000' && area !== '666' && !area.startsWith('9') && group !== '00' && serial !== '0000';
    return { start: match.index, end: match.index + match[0].length, valid };
  });
}
