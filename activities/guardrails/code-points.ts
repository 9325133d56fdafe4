/**
 * Lengths in Unicode code points rather than UTF-16 units, so an emoji counts as one character and a
 * cut never leaves half a surrogate pair behind.
 */

export function codePointLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

/** The first `count` code points of the text. */
export function firstCodePoints(text: string, count: number): string {
  let taken = 0;
  let end = 0;
  for (const char of text) {
    if (taken === count) break;
    end += char.length;
    taken++;
  }
  return text.slice(0, end);
}
