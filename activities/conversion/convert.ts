import { decodeText } from './charset.js';
import { ConversionContext, type ConvertOptions } from './context.js';
import { cfbFailure, isCfb, isTextFamily, sniffFormat, type DocumentFormat } from './detect.js';
import { convertDocx } from './docx.js';
import { convertEpub } from './epub.js';
import { ConversionError, describeError } from './errors.js';
import { hasText } from './markdown.js';
import { convertOdf } from './odf.js';
import { convertPdf } from './pdf.js';
import { convertPptx } from './pptx.js';
import { textToMarkdown } from './text.js';
import { convertXlsx } from './xlsx.js';

export interface ConversionResult {
  markdown: string;
  /** The document's own title (HTML <title>, OOXML/ODF/EPUB metadata, PDF info), when it has one. */
  title?: string;
  /**
   * Things the user may want to know that did not stop the conversion: ignored external references,
   * skipped pages without text, truncated huge sheets. Human-readable sentences.
   */
  warnings: string[];
}

export interface ConvertToMarkdownOptions extends ConvertOptions {
  /** The upload's declared Content-Type; its `charset=` is used when decoding text formats. */
  contentType?: string;
}

const LABELS: Record<string, string> = {
  docx: 'Word document', pptx: 'PowerPoint presentation', xlsx: 'Excel workbook', pdf: 'PDF', epub: 'EPUB',
  odt: 'OpenDocument text', odp: 'OpenDocument presentation', ods: 'OpenDocument spreadsheet',
  html: 'HTML file', txt: 'text file', md: 'Markdown file', csv: 'CSV file', tsv: 'TSV file', json: 'JSON file',
  xml: 'XML file', yaml: 'YAML file',
};

/**
 * Converts a document of a known format (see {@link detectFormat}) to Markdown. Text formats are
 * decoded (charset detected) and converted too, so one call handles every upload.
 *
 * Throws {@link ConversionError} (its message is meant for users) on unsupported, encrypted, empty,
 * text-less (scanned PDF), oversized (zip bomb), damaged or unsafe input, after `maxMs` (default
 * 30 s) and when `signal` aborts. Never fetches anything external.
 */
export async function convertToMarkdown(
  bytes: Uint8Array,
  format: DocumentFormat,
  options: ConvertToMarkdownOptions = {},
): Promise<ConversionResult> {
  const ctx = new ConversionContext(options);
  try {
    return await ctx.bound(dispatch(bytes, format, ctx, options.contentType));
  } catch (err) {
    if (err instanceof ConversionError) throw err;
    const label = LABELS[format] ?? 'document';
    throw new ConversionError('corrupt', `This ${label} could not be converted: ${describeError(err)}.`, { cause: err });
  }
}

export interface ConvertDocumentOptions extends ConvertToMarkdownOptions {
  filename?: string;
}

/** {@link detectFormat} then {@link convertToMarkdown}: the whole upload pipeline in one call. */
export async function convertDocument(
  bytes: Uint8Array,
  options: ConvertDocumentOptions = {},
): Promise<ConversionResult & { format: DocumentFormat }> {
  const sniff = await sniffFormat(bytes, options.filename, options.contentType);
  if (sniff.format === 'unsupported') throw sniff.failure ?? unsupported();
  const result = await convertToMarkdown(bytes, sniff.format, options);
  return { ...result, format: sniff.format };
}

async function dispatch(bytes: Uint8Array, format: DocumentFormat, ctx: ConversionContext, contentType?: string): Promise<ConversionResult> {
  if (isTextFamily(format)) {
    const { markdown, title } = textToMarkdown(decodeText(bytes, contentType), format);
    if (!hasText(markdown)) throw new ConversionError('empty', 'This file has no text to index.');
    return { markdown, title, warnings: ctx.warnings };
  }
  if ((format === 'docx' || format === 'pptx' || format === 'xlsx') && isCfb(bytes)) throw cfbFailure(bytes);
  switch (format) {
    case 'docx':
      return convertDocx(bytes, ctx);
    case 'pptx':
      return convertPptx(bytes, ctx);
    case 'xlsx':
      return convertXlsx(bytes, ctx);
    case 'pdf':
      return convertPdf(bytes, ctx);
    case 'epub':
      return convertEpub(bytes, ctx);
    case 'odt':
    case 'odp':
    case 'ods':
      return convertOdf(bytes, format, ctx);
    case 'unsupported': {
      const sniff = await sniffFormat(bytes);
      throw sniff.failure ?? unsupported();
    }
    default:
      throw unsupported();
  }
}

function unsupported(): ConversionError {
  return new ConversionError('unsupported', 'This file is not a supported document format.');
}
