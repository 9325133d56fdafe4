import { htmlToMarkdown } from './html.js';
import { ConversionError } from './errors.js';
import { hasText, normalizeMarkdown, renderTable } from './markdown.js';
import type { TextFormat } from './detect.js';

/**
 * Text-family documents (already decoded to a string) → Markdown:
 * - md / txt: as they are (newlines normalised);
 * - html: {@link htmlToMarkdown} with main-content extraction;
 * - csv / tsv: one Markdown table, the first record as its header row (delimiter sniffed for csv);
 * - json: a ```json fence, re-indented when it arrives minified (so it can be chunked by lines);
 * - xml / yaml: a fenced block.
 * Throws ConversionError `empty` when nothing readable is left (a blank file, an empty page).
 */
export function textToMarkdown(text: string, format: TextFormat): { markdown: string; title?: string } {
  const result = convertText(text, format);
  if (!hasText(result.markdown)) throw new ConversionError('empty', 'This file has no text to index.');
  return result;
}

function convertText(text: string, format: TextFormat): { markdown: string; title?: string } {
  switch (format) {
    case 'html':
      return htmlToMarkdown(text, { mainContent: true });
    case 'csv':
      return { markdown: csvToMarkdown(text, sniffDelimiter(text)) };
    case 'tsv':
      return { markdown: csvToMarkdown(text, '\t') };
    case 'json':
      return { markdown: fence(prettyJson(text), 'json') };
    case 'xml':
      return { markdown: fence(text, 'xml') };
    case 'yaml':
      return { markdown: fence(text, 'yaml') };
    case 'md':
    case 'txt':
      return { markdown: normalizeMarkdown(text) };
  }
}

function fence(text: string, lang: string): string {
  const body = text.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
  if (!body.trim()) return '';
  const longest = Math.max(2, ...Array.from(body.matchAll(/`{3,}/g), (m) => m[0].length));
  const marker = '`'.repeat(longest + 1);
  return `${marker}${lang}\n${body}\n${marker}`;
}

function prettyJson(text: string): string {
  const longLines = text.split('\n').some((line) => line.length > 400);
  if (!longLines) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Picks the delimiter (comma, semicolon, tab, pipe) that splits the first lines most consistently. */
export function sniffDelimiter(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '').slice(0, 20);
  let best = ',';
  let bestScore = -1;
  for (const delimiter of [',', ';', '\t', '|']) {
    const counts = lines.map((line) => parseCsv(line, delimiter)[0]?.length ?? 1);
    if (counts.length === 0) continue;
    const first = counts[0]!;
    if (first < 2) continue;
    const consistent = counts.filter((c) => c === first).length / counts.length;
    const score = consistent * 100 + first;
    if (score > bestScore) {
      bestScore = score;
      best = delimiter;
    }
  }
  return best;
}

/** RFC 4180 parsing: quoted fields, doubled quotes, newlines inside quotes. */
export function parseCsv(text: string, delimiter = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        field += ch;
      }
      continue;
    }
    if (ch === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else if (ch === delimiter) {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += ch;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((cell) => cell.trim() !== ''));
}

export function csvToMarkdown(text: string, delimiter = ','): string {
  return renderTable(parseCsv(text, delimiter), { dropEmptyColumns: false });
}
