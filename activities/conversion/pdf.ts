import { getDocumentProxy } from 'unpdf';
import type { ConversionContext } from './context.js';
import type { ConversionResult } from './convert.js';
import { ConversionError, describeError } from './errors.js';
import { escapeLineStart, normalizeMarkdown, squeeze } from './markdown.js';

/**
 * PDF → Markdown from the text layer (unpdf's serverless PDF.js; no OCR). Lines come from PDF.js's
 * end-of-line marks; a vertical gap clearly larger than the line height, or a jump back up the page
 * (a new column), starts a new paragraph, so the chunker has paragraphs to split on. Pages are
 * separated by blank lines.
 *
 * Failures: no text layer at all (a scan or photo) → `no-text-layer`; a user password → `encrypted`
 * (owner-password "copy protection" alone does not stop extraction); a damaged file → `corrupt`.
 */

/** Letters and digits a PDF must yield to count as having a text layer. */
const MIN_TEXT_CHARS = 16;

interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
  hasEOL: boolean;
}

interface Line {
  text: string;
  y: number;
  height: number;
}

export async function convertPdf(bytes: Uint8Array, ctx: ConversionContext): Promise<ConversionResult> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await ctx.bound(
      getDocumentProxy(new Uint8Array(bytes), {
        isEvalSupported: false,
        useSystemFonts: false,
        disableFontFace: true,
        stopAtErrors: false,
        verbosity: 0,
      }),
    );
  } catch (err) {
    throw openError(err);
  }
  try {
    const pages: string[] = [];
    const empty: number[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      await ctx.checkpoint();
      let text = '';
      try {
        const page = await ctx.bound(pdf.getPage(n));
        const content = await ctx.bound(page.getTextContent());
        text = pageText(content.items.filter((i): i is PdfTextItem & typeof i => 'str' in i) as PdfTextItem[]);
        page.cleanup();
      } catch (err) {
        if (err instanceof ConversionError) throw err;
        ctx.warn(`Page ${n} could not be read and was skipped (${describeError(err)}).`);
      }
      if (/[\p{L}\p{N}]/u.test(text)) pages.push(text);
      else empty.push(n);
    }
    const markdown = normalizeMarkdown(pages.join('\n\n'));
    const letters = markdown.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
    if (letters < MIN_TEXT_CHARS) {
      throw new ConversionError(
        'no-text-layer',
        'This PDF has no text layer (it is a scan or a photo of pages); OCR is not supported, so there is nothing to index. Upload a PDF with selectable text instead.',
      );
    }
    if (empty.length > 0) ctx.warn(`${empty.length === 1 ? 'Page' : 'Pages'} ${pageList(empty)} of ${pdf.numPages} had no text layer (blank, or scanned) and ${empty.length === 1 ? 'was' : 'were'} skipped.`);
    let title: string | undefined;
    try {
      const meta = await ctx.bound(pdf.getMetadata());
      const info = meta.info as Record<string, unknown> | undefined;
      const raw = typeof info?.Title === 'string' ? squeeze(info.Title) : '';
      title = raw && !/^(untitled|\(?anonymous\)?|document\d*|title)$/i.test(raw) ? raw : undefined;
    } catch {
      title = undefined;
    }
    return { markdown, title, warnings: ctx.warnings };
  } finally {
    void pdf.destroy().catch(() => undefined);
  }
}

function openError(err: unknown): ConversionError {
  if (err instanceof ConversionError) return err;
  const name = err instanceof Error ? err.name : '';
  if (name === 'PasswordException') {
    return new ConversionError('encrypted', 'This PDF is password-protected (encrypted); remove the password and upload it again.', { cause: err });
  }
  if (name === 'InvalidPDFException' || name === 'MissingPDFException' || name === 'FormatError') {
    return new ConversionError('corrupt', 'This PDF is damaged or not really a PDF and cannot be read.', { cause: err });
  }
  return new ConversionError('corrupt', `This PDF could not be read: ${describeError(err)}.`, { cause: err });
}

/** Text of one page: lines from end-of-line marks, paragraphs from vertical gaps. */
function pageText(items: PdfTextItem[]): string {
  const lines: Line[] = [];
  let current: Line | undefined;
  for (const item of items) {
    const y = item.transform[5] ?? 0;
    const height = Math.abs(item.height || item.transform[3] || 0);
    if (!current) current = { text: '', y, height };
    current.text += item.str;
    current.height = Math.max(current.height, height);
    if (item.hasEOL) {
      lines.push(current);
      current = undefined;
    }
  }
  if (current) lines.push(current);

  const out: string[] = [];
  let previous: Line | undefined;
  for (const line of lines) {
    const text = line.text.replace(/[ \t\u00a0]+/g, ' ').trim();
    if (!text) continue;
    if (previous) {
      const gap = previous.y - line.y;
      const lineHeight = Math.max(previous.height, line.height, 1);
      out.push(gap > lineHeight * 1.9 || gap < -lineHeight ? '\n\n' : '\n');
    }
    out.push(escapeLineStart(text, { lists: false }));
    previous = line;
  }
  return out.join('');
}

function pageList(pages: number[]): string {
  const ranges: string[] = [];
  let start = pages[0]!;
  let end = start;
  for (const p of pages.slice(1).concat(Number.NaN)) {
    if (p === end + 1) {
      end = p;
      continue;
    }
    ranges.push(start === end ? `${start}` : `${start}–${end}`);
    start = p;
    end = p;
  }
  return ranges.slice(0, 10).join(', ') + (ranges.length > 10 ? ', ...' : '');
}
