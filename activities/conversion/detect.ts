import { fileTypeFromBuffer } from 'file-type';
import { hasUnicodeBom, looksLikeText } from './charset.js';
import { ConversionContext } from './context.js';
import { ConversionError } from './errors.js';
import { looksLikeZip, ZipArchive } from './zip.js';

/** Text formats: decoded (charset detected) and turned into Markdown at once, no worker needed. */
export const TEXT_FORMATS = ['txt', 'md', 'csv', 'tsv', 'json', 'html', 'xml', 'yaml'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** Binary document formats, converted to Markdown in the background. */
export const BINARY_FORMATS = ['docx', 'pptx', 'xlsx', 'pdf', 'epub', 'odt', 'odp', 'ods'] as const;
export type BinaryFormat = (typeof BINARY_FORMATS)[number];

export type DocumentFormat = TextFormat | BinaryFormat | 'unsupported';

export function isTextFamily(format: DocumentFormat | string): format is TextFormat {
  return (TEXT_FORMATS as readonly string[]).includes(format);
}

export function isBinaryFormat(format: DocumentFormat | string): format is BinaryFormat {
  return (BINARY_FORMATS as readonly string[]).includes(format);
}

export interface FormatSniff {
  format: DocumentFormat;
  /** The MIME type the content was recognised as, when known. */
  mime?: string;
  /** Why the format is 'unsupported' (or why it will fail): the error a conversion would raise. */
  failure?: ConversionError;
}

const EXTENSIONS: Record<string, DocumentFormat> = {
  txt: 'txt', text: 'txt', log: 'txt', ini: 'txt', cfg: 'txt', conf: 'txt', toml: 'txt', rst: 'txt', adoc: 'txt',
  tex: 'txt', srt: 'txt', vtt: 'txt', sql: 'txt', sh: 'txt', py: 'txt', js: 'txt', ts: 'txt', java: 'txt', c: 'txt',
  h: 'txt', cpp: 'txt', cs: 'txt', go: 'txt', rs: 'txt', rb: 'txt', php: 'txt', css: 'txt',
  md: 'md', markdown: 'md', mdown: 'md', mkd: 'md', mdx: 'md',
  csv: 'csv', tsv: 'tsv', tab: 'tsv',
  json: 'json', jsonl: 'txt', ndjson: 'txt', geojson: 'json',
  html: 'html', htm: 'html', xhtml: 'html', shtml: 'html',
  xml: 'xml', svg: 'unsupported', rss: 'xml', atom: 'xml',
  yaml: 'yaml', yml: 'yaml',
  docx: 'docx', docm: 'docx', dotx: 'docx', dotm: 'docx',
  pptx: 'pptx', pptm: 'pptx', ppsx: 'pptx', ppsm: 'pptx', potx: 'pptx', potm: 'pptx',
  xlsx: 'xlsx', xlsm: 'xlsx', xltx: 'xlsx', xltm: 'xlsx',
  pdf: 'pdf', epub: 'epub',
  odt: 'odt', ott: 'odt', odp: 'odp', otp: 'odp', ods: 'ods', ots: 'ods',
};

const MIME_TYPES: Record<string, DocumentFormat> = {
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/json': 'json',
  'text/json': 'json',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/yaml': 'yaml',
  'text/yaml': 'yaml',
  'application/x-yaml': 'yaml',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-word.document.macroenabled.12': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.ms-powerpoint.presentation.macroenabled.12': 'pptx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.ms-excel.sheet.macroenabled.12': 'xlsx',
  'application/pdf': 'pdf',
  'application/epub+zip': 'epub',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
};

const ODF_MIMETYPES: Record<string, BinaryFormat> = {
  'application/epub+zip': 'epub',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.text-template': 'odt',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/vnd.oasis.opendocument.presentation-template': 'odp',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.spreadsheet-template': 'ods',
};

export function formatFromFilename(filename: string | undefined): DocumentFormat | undefined {
  const ext = filename ? /\.([A-Za-z0-9]+)$/.exec(filename.trim())?.[1]?.toLowerCase() : undefined;
  return ext ? EXTENSIONS[ext] : undefined;
}

export function formatFromContentType(contentType: string | undefined): DocumentFormat | undefined {
  const mime = contentType?.split(';')[0]?.trim().toLowerCase();
  return mime ? MIME_TYPES[mime] : undefined;
}

/**
 * Identifies a document: the content decides (magic bytes via `file-type`, ZIP contents for the
 * container formats, a text/binary check), the file name and declared Content-Type only choose
 * between formats the content cannot tell apart (csv vs txt) or name a damaged file. Never throws.
 */
export async function sniffFormat(bytes: Uint8Array, filename?: string, contentType?: string): Promise<FormatSniff> {
  const byName = formatFromFilename(filename);
  const byType = formatFromContentType(contentType);
  const hint = byName ?? byType;

  if (bytes.length === 0) {
    return { format: hint && isTextFamily(hint) ? hint : 'txt' };
  }
  if (looksLikeZip(bytes)) return sniffZip(bytes, hint);
  if (isCfb(bytes)) return sniffCfb(bytes, hint);
  if (hasPdfHeader(bytes)) return { format: 'pdf', mime: 'application/pdf' };
  // A UTF-16 BOM (FF FE) also looks like an MPEG frame sync to file-type: text with a BOM is text.
  if (hasUnicodeBom(bytes)) return { format: refineText(bytes, hint) };

  let detected: { ext: string; mime: string } | undefined;
  try {
    detected = await fileTypeFromBuffer(bytes);
  } catch {
    detected = undefined;
  }
  if (detected) {
    const format = EXTENSIONS[detected.ext];
    if (format && format !== 'unsupported' && isBinaryFormat(format)) return { format, mime: detected.mime };
    if (format && isTextFamily(format)) return { format: refineText(bytes, hint, format), mime: detected.mime };
    return { format: 'unsupported', mime: detected.mime, failure: unsupportedMime(detected.mime, detected.ext) };
  }

  if (looksLikeText(bytes)) return { format: refineText(bytes, hint) };
  return {
    format: 'unsupported',
    failure: new ConversionError(
      'unsupported',
      'This file is not a supported document: its content is not text and matches no known document format (supported: text, Markdown, CSV, JSON, HTML, XML, DOCX, PPTX, XLSX, PDF, EPUB, ODT, ODP, ODS).',
    ),
  };
}

/** {@link sniffFormat}'s format only. */
export async function detectFormat(bytes: Uint8Array, filename?: string, contentType?: string): Promise<DocumentFormat> {
  return (await sniffFormat(bytes, filename, contentType)).format;
}

/** Text content: the name/type hint when it is a text format, otherwise a guess from the content. */
function refineText(bytes: Uint8Array, hint: DocumentFormat | undefined, detected?: DocumentFormat): TextFormat {
  if (hint && isTextFamily(hint)) return hint;
  if (detected && isTextFamily(detected)) return detected;
  const head = Buffer.from(bytes.subarray(0, 2048)).toString('utf8').replace(/^\uFEFF/, '').trimStart().toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html') || /^<\?xml[^>]*>\s*<!doctype html/.test(head)) return 'html';
  if (head.startsWith('<?xml') || /^<[a-z][\w:-]*[\s>]/.test(head)) return /<(html|body|div|p)[\s>]/.test(head) ? 'html' : 'xml';
  if (head.startsWith('{') || head.startsWith('[')) {
    try {
      JSON.parse(Buffer.from(bytes).toString('utf8').replace(/^\uFEFF/, ''));
      return 'json';
    } catch {
      /* not JSON */
    }
  }
  return 'txt';
}

function sniffZip(bytes: Uint8Array, hint: DocumentFormat | undefined): FormatSniff {
  let zip: ZipArchive;
  // Names only: size limits are applied by the conversion, which names the problem precisely.
  const ctx = new ConversionContext({ maxUncompressedBytes: Number.MAX_SAFE_INTEGER, maxCompressionRatio: Number.MAX_SAFE_INTEGER });
  try {
    zip = ZipArchive.open(bytes, ctx, 'file');
  } catch (err) {
    if (hint && isBinaryFormat(hint) && hint !== 'pdf') return { format: hint };
    return { format: 'unsupported', failure: err instanceof ConversionError ? err : undefined };
  }
  const small = (name: string, max: number): string | undefined => {
    const entry = zip.entries.get(name);
    if (!entry || entry.uncompressedSize > max) return undefined;
    try {
      return zip.readText(name);
    } catch {
      return undefined;
    }
  };
  const mimetype = small('mimetype', 200)?.trim();
  if (mimetype && ODF_MIMETYPES[mimetype]) return { format: ODF_MIMETYPES[mimetype], mime: mimetype };

  const types = small('[Content_Types].xml', 1024 * 1024) ?? '';
  if (/wordprocessingml\.(document|template)\.main|ms-word\.(document|template)\.macroenabled/i.test(types) || zip.has('word/document.xml')) {
    return { format: 'docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' };
  }
  if (/presentationml\.(presentation|slideshow|template)\.main|ms-powerpoint\.(presentation|slideshow|template)\.macroenabled/i.test(types) || zip.has('ppt/presentation.xml')) {
    return { format: 'pptx', mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' };
  }
  if (/spreadsheetml\.(sheet|template)\.main|ms-excel\.(sheet|template)\.macroenabled/i.test(types) || zip.has('xl/workbook.xml')) {
    return { format: 'xlsx', mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };
  }
  if (zip.has('META-INF/container.xml') && hint === 'epub') return { format: 'epub', mime: 'application/epub+zip' };
  if (zip.has('content.xml') && hint && ['odt', 'odp', 'ods'].includes(hint)) return { format: hint };
  return {
    format: 'unsupported',
    mime: 'application/zip',
    failure: new ConversionError(
      'unsupported',
      'This ZIP archive is not a supported document (DOCX, PPTX, XLSX, EPUB, ODT, ODP, ODS); upload the documents inside it one by one.',
    ),
  };
}

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export function isCfb(bytes: Uint8Array): boolean {
  return CFB_MAGIC.every((b, i) => bytes[i] === b);
}

function utf16(name: string): Buffer {
  return Buffer.from(name, 'utf16le');
}

/**
 * An OLE compound file: either an encrypted OOXML package (Office wraps password-protected docx/xlsx/
 * pptx in one, with `EncryptionInfo` and `EncryptedPackage` streams) or a legacy binary Office file.
 */
export function cfbFailure(bytes: Uint8Array): ConversionError {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.includes(utf16('EncryptedPackage')) || buf.includes(utf16('EncryptionInfo'))) {
    return new ConversionError('encrypted', 'This Office document is password-protected (encrypted); remove the password and upload it again.');
  }
  const legacy = buf.includes(utf16('WordDocument'))
    ? ['Word', '.doc', '.docx']
    : buf.includes(utf16('Workbook')) || buf.includes(utf16('Book'))
      ? ['Excel', '.xls', '.xlsx']
      : buf.includes(utf16('PowerPoint Document'))
        ? ['PowerPoint', '.ppt', '.pptx']
        : undefined;
  if (legacy) {
    return new ConversionError(
      'unsupported',
      `Legacy binary ${legacy[0]} files (${legacy[1]}) are not supported; save it as ${legacy[2]} and upload it again.`,
    );
  }
  return new ConversionError('unsupported', 'This file is an OLE compound document (an old binary Office format or similar), which is not supported.');
}

function sniffCfb(bytes: Uint8Array, hint: DocumentFormat | undefined): FormatSniff {
  const failure = cfbFailure(bytes);
  // An encrypted package named .docx/.xlsx/.pptx keeps its format so its conversion fails as encrypted.
  if (failure.kind === 'encrypted' && hint && ['docx', 'xlsx', 'pptx'].includes(hint)) return { format: hint, mime: 'application/x-cfb', failure };
  return { format: 'unsupported', mime: 'application/x-cfb', failure };
}

function hasPdfHeader(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  const at = head.indexOf('%PDF-');
  if (at === 0) return true;
  // Some writers put junk before the header; then insist on a PDF trailer too.
  return at > 0 && Buffer.from(bytes.subarray(Math.max(0, bytes.length - 2048))).toString('latin1').includes('%%EOF');
}

function unsupportedMime(mime: string, ext: string): ConversionError {
  if (mime.startsWith('image/')) {
    return new ConversionError(
      'unsupported',
      `Images (${mime}) are not supported: an image has no text layer and OCR is not part of the pipeline.`,
    );
  }
  if (mime.startsWith('audio/') || mime.startsWith('video/')) {
    return new ConversionError('unsupported', `Audio and video files (${mime}) are not supported.`);
  }
  if (['gz', 'tar', '7z', 'rar', 'bz2', 'xz', 'zst', 'cab', 'lz', 'lzh', 'arj'].includes(ext)) {
    return new ConversionError('unsupported', `Archives (${mime}) are not supported; upload the documents inside it one by one.`);
  }
  if (ext === 'rtf') return new ConversionError('unsupported', 'RTF files are not supported; save it as .docx and upload it again.');
  return new ConversionError('unsupported', `This file type (${mime}) is not a supported document.`);
}
