/**
 * Document conversion for knowledge uploads: format detection, text decoding, and conversion of
 * DOCX, PPTX, XLSX, PDF, EPUB, ODT/ODP/ODS, HTML, CSV, JSON, ... to Markdown. Pure functions: no
 * database, no Temporal, no network. See docs in each module.
 */
export { ConversionError, isConversionError, type ConversionErrorKind } from './errors.js';
export { DEFAULT_LIMITS, type ConversionLimits, type ConvertOptions } from './context.js';
export {
  BINARY_FORMATS,
  TEXT_FORMATS,
  detectFormat,
  formatFromContentType,
  formatFromFilename,
  isBinaryFormat,
  isTextFamily,
  sniffFormat,
  type BinaryFormat,
  type DocumentFormat,
  type FormatSniff,
  type TextFormat,
} from './detect.js';
export { decodeText, detectCharset, type CharsetDetection } from './charset.js';
export { htmlToMarkdown, type HtmlToMarkdownOptions } from './html.js';
export { textToMarkdown } from './text.js';
export {
  convertDocument,
  convertToMarkdown,
  type ConversionResult,
  type ConvertDocumentOptions,
  type ConvertToMarkdownOptions,
} from './convert.js';
export { convertToMarkdownIsolated, type IsolatedConvertOptions } from './isolated.js';
