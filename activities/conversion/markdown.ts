/**
 * Markdown building blocks shared by the converters: GFM tables (always with a header row and no
 * raw HTML), escaping of plain text, and final normalisation of a converted document.
 */

/** Collapses whitespace (including newlines) in a table cell and escapes its pipes. */
export function tableCell(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/(^|[^\\])\|/g, '$1\\|')
    .replace(/(^|[^\\])\|/g, '$1\\|'); // twice: adjacent pipes ("||") share the lookbehind character
}

export interface TableOptions {
  /** Drop columns that are empty in every row (padding from merged or sparse cells). Default true. */
  dropEmptyColumns?: boolean;
}

/**
 * Renders rows as a GFM pipe table. The first row is the header row: tables without a header get their
 * first row promoted, which keeps every row's text in table lines and gives chunked tables a header to
 * repeat. Cells are cleaned with {@link tableCell}; rows are padded to the widest row. Rows whose cells
 * are all empty are dropped. Returns '' for a table without any text.
 */
export function renderTable(rows: string[][], options: TableOptions = {}): string {
  let cleaned = rows.map((row) => row.map(tableCell)).filter((row) => row.some((cell) => cell !== ''));
  if (cleaned.length === 0) return '';
  let width = Math.max(...cleaned.map((row) => row.length));
  cleaned = cleaned.map((row) => (row.length < width ? [...row, ...new Array<string>(width - row.length).fill('')] : row));
  if (options.dropEmptyColumns !== false) {
    const keep: number[] = [];
    for (let c = 0; c < width; c++) if (cleaned.some((row) => row[c] !== '')) keep.push(c);
    if (keep.length < width) {
      cleaned = cleaned.map((row) => keep.map((c) => row[c]!));
      width = keep.length;
    }
  }
  const line = (cells: string[]) => `| ${cells.map((c) => c || ' ').join(' | ')} |`.replace(/ {2,}\|/g, ' |');
  const out = [line(cleaned[0]!), `|${' --- |'.repeat(width)}`];
  for (const row of cleaned.slice(1)) out.push(line(row));
  return out.join('\n');
}

/**
 * Escapes the characters that would turn plain text (from slides, spreadsheets, ODF) into Markdown
 * structure at the start of a line: headings, quotes, table rows, fences, rules, and list markers
 * unless `lists: false` (PDF text, where a line starting "1. " usually is a list item).
 * Inline characters are left alone: the output is for reading and retrieval, not round-tripping.
 */
export function escapeLineStart(text: string, options: { lists?: boolean } = {}): string {
  const lists = options.lists !== false;
  return text
    .split('\n')
    .map((line) => {
      const m = /^(\s*)(.*)$/.exec(line)!;
      const indent = m[1]!;
      const rest = m[2]!;
      if (/^(#{1,6}(\s|$)|>|\||```|~~~|={3,}\s*$|-{3,}\s*$)/.test(rest)) return `${indent}\\${rest}`;
      if (!lists) return line;
      if (/^[-*+](\s|$)/.test(rest)) return `${indent}\\${rest}`;
      const ordered = /^(\d{1,9})([.)])(\s|$)/.exec(rest);
      if (ordered) return `${indent}${ordered[1]}\\${rest.slice(ordered[1]!.length)}`;
      return line;
    })
    .join('\n');
}

/**
 * Undoes, on a line that becomes part of a table cell, the escapes that keep plain text from starting a
 * Markdown block: escapeLineStart's and turndown's `\>`, `\#`, `\-`, `\+`, `\=`, `1\.`. A cell is
 * inline content, where none of these starts anything, so a cell reading "> 5 years" (`&gt; 5 years` in
 * the XML) comes out as itself. Escapes that mean something inline (`\*`, `\_`, `` \` ``, `\~`, `\|`) stay.
 */
export function unescapeLineStartInCell(line: string): string {
  return line.replace(/^(\s*)\\([>#+=-])/, '$1$2').replace(/^(\s*\d{1,9})\\([.)])/, '$1$2');
}

/** Collapses runs of spaces and tabs (not newlines) and trims. */
export function squeeze(text: string): string {
  return text.replace(/[ \t\u00a0]+/g, ' ').trim();
}

/** Private-use characters the converters use as in-band markers; never left in output. */
const MARKERS = /[\uE000-\uE01F]/g;

/**
 * Final clean-up of a converted document: Unix newlines, no control characters or markers, no
 * trailing spaces, at most one blank line in a row (outside fenced code), no leading/trailing blanks.
 */
export function normalizeMarkdown(markdown: string): string {
  const lines = markdown
    .replace(/\r\n?/g, '\n')
    .replace(MARKERS, '')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .split('\n');
  const out: string[] = [];
  let fence: string | undefined;
  let blank = 0;
  for (const raw of lines) {
    const line = raw.replace(/[ \t]+$/, '');
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      out.push(raw);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      continue;
    }
    if (marker) fence = marker;
    if (line === '') {
      blank++;
      if (blank > 1) continue;
    } else {
      blank = 0;
    }
    out.push(line);
  }
  return out.join('\n').trim();
}

/** True when the Markdown has some letter or digit (a converted document that is not just markup). */
export function hasText(markdown: string): boolean {
  return /[\p{L}\p{N}]/u.test(markdown);
}
