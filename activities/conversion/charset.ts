import chardet from 'chardet';
import iconv from 'iconv-lite';

/**
 * Character-set detection and decoding for text-family uploads. Order of evidence:
 * 1. a byte-order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE);
 * 2. UTF-16 without a BOM (NUL bytes in every other position);
 * 3. valid UTF-8 (which includes plain ASCII), even when something else is declared;
 * 4. a declared charset (the Content-Type `charset=` parameter, then an HTML `<meta charset>` or an
 *    XML `encoding=` declaration), trusted when the bytes decode cleanly with it;
 * 5. `chardet`'s candidates, re-ranked by how plausible each decoding reads (short files fool
 *    chardet's statistics: a 70-byte Shift_JIS CSV scores highest as windows-1252);
 * 6. windows-1252 as the last resort (it decodes every byte).
 */

export type CharsetSource = 'bom' | 'declared' | 'utf8' | 'detected' | 'fallback';

export interface CharsetDetection {
  /** An iconv-lite encoding name (`utf-8`, `utf-16le`, `cp932`, `windows-1252`, ...). */
  charset: string;
  source: CharsetSource;
}

/** Bytes sampled for detection; decoding always covers the whole input. */
const SAMPLE_BYTES = 64 * 1024;

export function detectCharset(bytes: Uint8Array, contentType?: string): CharsetDetection {
  const bom = bomCharset(bytes);
  if (bom) return { charset: bom.charset, source: 'bom' };
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const utf16 = utf16WithoutBom(sample);
  if (utf16) return { charset: utf16, source: 'detected' };
  const declared = [charsetParam(contentType), inDocumentCharset(sample)].map((d) => d && normalizeCharset(d)).filter((d): d is string => !!d);
  // Valid UTF-8 wins over a declared single-byte charset: servers often label UTF-8 as ISO-8859-1,
  // while real ISO-8859-1 text almost never forms valid multi-byte UTF-8 sequences.
  if (isUtf8(sample, bytes.length > SAMPLE_BYTES)) return { charset: 'utf-8', source: declared[0] === 'utf-8' ? 'declared' : 'utf8' };
  for (const charset of declared) {
    if (charset !== 'utf-8' && !charset.startsWith('utf-16') && !charset.startsWith('utf-32') && cleanDecode(sample, charset)) {
      return { charset, source: 'declared' };
    }
  }
  const detected = rankCandidates(sample);
  if (detected) return { charset: detected, source: 'detected' };
  return { charset: 'windows-1252', source: 'fallback' };
}

/**
 * Decodes text bytes to a string (see {@link detectCharset}); drops the BOM and NUL characters, turns
 * CRLF/CR newlines into LF, and a lone UTF-16 surrogate (half an emoji, cut by a program) into U+FFFD as
 * any invalid sequence is: Postgres' jsonb refuses one, and a chunk's heading path is jsonb.
 */
export function decodeText(bytes: Uint8Array, contentType?: string): string {
  const { charset } = detectCharset(bytes, contentType);
  const skip = bomCharset(bytes)?.length ?? 0;
  const body = bytes.subarray(skip);
  const text = charset === 'utf-8' ? new TextDecoder('utf-8').decode(body) : iconv.decode(body, charset, { stripBOM: true });
  return text.replace(/^\uFEFF/, '').replaceAll('\u0000', '').replace(/\r\n?/g, '\n').toWellFormed();
}

/**
 * A quick text-versus-binary verdict for content we cannot identify by signature: text has no NUL
 * bytes (unless it is UTF-16/32) and very few other control characters once decoded.
 */
export function looksLikeText(bytes: Uint8Array): boolean {
  if (bytes.length === 0) return true;
  if (bomCharset(bytes)) return true;
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  if (utf16WithoutBom(sample)) return true;
  let controls = 0;
  for (const b of sample) {
    if (b === 0) return false;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) controls++;
  }
  if (controls > sample.length * 0.01) return false;
  if (isUtf8(sample, bytes.length > SAMPLE_BYTES)) return true;
  const charset = rankCandidates(sample);
  if (!charset) return false;
  return plausibility(iconv.decode(Buffer.from(sample), charset)) > -0.05;
}

/** True when the bytes start with a Unicode byte-order mark (UTF-8, UTF-16, UTF-32). */
export function hasUnicodeBom(bytes: Uint8Array): boolean {
  return bomCharset(bytes) !== undefined;
}

function bomCharset(bytes: Uint8Array): { charset: string; length: number } | undefined {
  const [a, b, c, d] = [bytes[0], bytes[1], bytes[2], bytes[3]];
  if (a === 0xef && b === 0xbb && c === 0xbf) return { charset: 'utf-8', length: 3 };
  if (a === 0xff && b === 0xfe && c === 0 && d === 0) return { charset: 'utf-32le', length: 4 };
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return { charset: 'utf-32be', length: 4 };
  if (a === 0xff && b === 0xfe) return { charset: 'utf-16le', length: 2 };
  if (a === 0xfe && b === 0xff) return { charset: 'utf-16be', length: 2 };
  return undefined;
}

function charsetParam(contentType: string | undefined): string | undefined {
  return contentType ? /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1] : undefined;
}

/** `<meta charset>`, `<meta http-equiv content="...; charset=">` or `<?xml encoding=?>` near the start. */
function inDocumentCharset(sample: Uint8Array): string | undefined {
  const head = Buffer.from(sample.subarray(0, 4096)).toString('latin1');
  return (
    /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([\w.:-]+)["']/i.exec(head)?.[1] ??
    /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1]
  );
}

const ALIASES: Record<string, string> = {
  utf8: 'utf-8',
  'utf-8': 'utf-8',
  'us-ascii': 'utf-8',
  ascii: 'utf-8',
  // Browsers decode these labels as their Windows supersets; so do we.
  'iso-8859-1': 'windows-1252',
  latin1: 'windows-1252',
  'latin-1': 'windows-1252',
  'iso-8859-9': 'windows-1254',
  shift_jis: 'cp932',
  'shift-jis': 'cp932',
  sjis: 'cp932',
  'x-sjis': 'cp932',
  'ms_kanji': 'cp932',
  'windows-31j': 'cp932',
  'euc-kr': 'cp949',
  gb2312: 'gb18030',
  gbk: 'gb18030',
  'utf-16': 'utf-16le',
  'utf-32': 'utf-32le',
};

/** An iconv-lite name for a charset label, or undefined when iconv-lite cannot decode it. */
export function normalizeCharset(label: string): string | undefined {
  const lower = label.trim().toLowerCase();
  const name = ALIASES[lower] ?? lower;
  return iconv.encodingExists(name) ? name : undefined;
}

/** Strict UTF-8 validation; a sample cut mid-character at its end is still accepted. */
function isUtf8(sample: Uint8Array, truncated: boolean): boolean {
  let bytes = sample;
  if (truncated) {
    // Back off an incomplete trailing sequence (at most 3 bytes).
    let end = bytes.length;
    for (let i = 1; i <= 3 && end - i >= 0; i++) {
      const b = bytes[end - i]!;
      if ((b & 0xc0) === 0x80) continue;
      if (b >= 0xc0) end -= i;
      break;
    }
    bytes = bytes.subarray(0, end);
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function cleanDecode(sample: Uint8Array, charset: string): boolean {
  const text = iconv.decode(Buffer.from(sample), charset);
  return !text.includes('\uFFFD');
}

/** UTF-16 without a BOM: mostly-ASCII text has a NUL in every other byte. */
function utf16WithoutBom(sample: Uint8Array): string | undefined {
  const n = Math.min(sample.length, 4096) & ~1;
  if (n < 4) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (sample[i] === 0) evenZeros++;
    if (sample[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.4 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.4 && oddZeros < pairs * 0.05) return 'utf-16be';
  return undefined;
}

const CHARDET_TO_ICONV: Record<string, string> = {
  'Shift_JIS': 'cp932',
  'ISO-8859-1': 'windows-1252',
  'ISO-8859-9': 'windows-1254',
  'EUC-KR': 'cp949',
  'GB18030': 'gb18030',
  'Big5': 'big5',
  'EUC-JP': 'euc-jp',
  'UTF-16LE': 'utf-16le',
  'UTF-16BE': 'utf-16be',
  'UTF-32LE': 'utf-32le',
  'UTF-32BE': 'utf-32be',
};

/** chardet's candidates, re-ranked by {@link plausibility} of the decoded sample. */
function rankCandidates(sample: Uint8Array): string | undefined {
  const seen = new Set<string>();
  let best: { charset: string; score: number } | undefined;
  const matches = chardet.analyse(sample).filter((m) => m.confidence > 0);
  for (const match of matches) {
    const name = CHARDET_TO_ICONV[match.name] ?? normalizeCharset(match.name);
    if (!name || seen.has(name) || !iconv.encodingExists(name)) continue;
    seen.add(name);
    // chardet's confidence (0-100) breaks ties between equally plausible decodings.
    const score = plausibility(iconv.decode(Buffer.from(sample), name)) + match.confidence / 10_000;
    if (!best || score > best.score) best = { charset: name, score };
  }
  return best?.charset;
}

type Script = 'latin' | 'cjk' | 'cyrillic' | 'greek' | 'hebrew' | 'arabic' | 'thai' | 'other';

function scriptOf(cp: number): Script {
  if (cp >= 0xc0 && cp <= 0x24f && cp !== 0xd7 && cp !== 0xf7) return 'latin';
  if ((cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x3400 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7af) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xff01 && cp <= 0xff5e) || (cp >= 0x3000 && cp <= 0x303f)) return 'cjk';
  if (cp >= 0x400 && cp <= 0x4ff) return 'cyrillic';
  if (cp >= 0x370 && cp <= 0x3ff) return 'greek';
  if (cp >= 0x590 && cp <= 0x5ff) return 'hebrew';
  if (cp >= 0x600 && cp <= 0x6ff) return 'arabic';
  if (cp >= 0xe00 && cp <= 0xe7f) return 'thai';
  return 'other';
}

/**
 * How much a decoded string reads like real text, per character (higher is better): replacement and
 * control characters are heavily penalised; letters of a script score when they sit next to letters of
 * the same script or ASCII letters (words), and lose when they sit isolated among symbols, which is
 * what mis-decoded multi-byte text looks like ("–¼‘O" instead of "名前"). CJK characters score on
 * their own.
 */
export function plausibility(text: string): number {
  const chars = Array.from(text);
  if (chars.length === 0) return 0;
  let score = 0;
  const isAsciiLetter = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) {
      if (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) score -= 5;
      continue;
    }
    if (cp === 0xfffd) {
      score -= 10;
      continue;
    }
    if (cp >= 0x80 && cp <= 0x9f) {
      score -= 5;
      continue;
    }
    const script = scriptOf(cp);
    if (script === 'cjk') {
      score += 1;
      continue;
    }
    if (script === 'other') {
      // Symbols, currency, dingbats, half-width katakana, punctuation: fine alone, suspicious in runs.
      const prev = chars[i - 1]?.codePointAt(0) ?? 0x20;
      const next = chars[i + 1]?.codePointAt(0) ?? 0x20;
      score -= prev >= 0x80 || next >= 0x80 ? 1.5 : 0.3;
      continue;
    }
    const prev = chars[i - 1];
    const next = chars[i + 1];
    const sameScript = (c: string | undefined) => c !== undefined && c.codePointAt(0)! >= 0x80 && scriptOf(c.codePointAt(0)!) === script;
    if (script === 'latin') {
      score += isAsciiLetter(prev) || isAsciiLetter(next) ? 0.5 : sameScript(prev) || sameScript(next) ? -0.5 : -1;
    } else {
      score += sameScript(prev) || sameScript(next) ? 0.5 : -1;
    }
  }
  return score / chars.length;
}
