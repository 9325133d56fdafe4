import { escapeLineStart, renderTable, squeeze } from './markdown.js';

/**
 * Spreadsheet grid → Markdown, shared by xlsx and ods. A sheet is cut into blocks: bands of rows
 * separated by empty rows, then within a band, groups of columns separated by empty columns (tables
 * side by side). Each block becomes
 * - a paragraph when it is a single cell (a title or a note),
 * - otherwise a table whose first row is the header; a leading row holding one cell over a wider
 *   block (a table title such as "Number of ducks per year") is written as a paragraph above it.
 */

export const MAX_COLUMNS = 16384;

/** Non-empty cell values of one sheet, keyed by {@link cellKey}. */
export type SheetCells = Map<number, string>;

export function cellKey(row: number, col: number): number {
  return row * MAX_COLUMNS + col;
}

interface Block {
  rows: number[];
  cols: number[];
}

export function renderSheet(cells: SheetCells): string {
  if (cells.size === 0) return '';
  const byRow = new Map<number, number[]>();
  for (const key of cells.keys()) {
    const row = Math.floor(key / MAX_COLUMNS);
    const col = key % MAX_COLUMNS;
    let cols = byRow.get(row);
    if (!cols) byRow.set(row, (cols = []));
    cols.push(col);
  }
  const rows = [...byRow.keys()].sort((a, b) => a - b);
  const out: string[] = [];
  for (const band of splitRuns(rows)) {
    const bandCols = [...new Set(band.flatMap((r) => byRow.get(r)!))].sort((a, b) => a - b);
    for (const cols of splitRuns(bandCols)) {
      const colSet = new Set(cols);
      const blockRows = band.filter((r) => byRow.get(r)!.some((c) => colSet.has(c)));
      out.push(renderBlock(cells, { rows: blockRows, cols }));
    }
  }
  return out.filter(Boolean).join('\n\n');
}

/** Splits a sorted list of indexes into runs of consecutive values. */
function splitRuns(sorted: number[]): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  for (const n of sorted) {
    if (run.length > 0 && n !== run[run.length - 1]! + 1) {
      runs.push(run);
      run = [];
    }
    run.push(n);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

function renderBlock(cells: SheetCells, block: Block): string {
  let grid = block.rows.map((r) => block.cols.map((c) => cells.get(cellKey(r, c)) ?? ''));
  const parts: string[] = [];
  // Title rows: one filled cell over a wider block.
  while (grid.length >= 2 && block.cols.length >= 2 && grid[0]!.filter((v) => v.trim() !== '').length === 1) {
    parts.push(escapeLineStart(squeeze(grid[0]!.find((v) => v.trim() !== '')!)));
    grid = grid.slice(1);
  }
  const filled = grid.flat().filter((v) => v.trim() !== '');
  if (filled.length === 1 && grid.length === 1 && grid[0]!.length === 1) {
    parts.push(escapeLineStart(squeeze(filled[0]!)));
  } else if (filled.length > 0) {
    parts.push(renderTable(grid));
  }
  return parts.filter(Boolean).join('\n\n');
}

// ---- number and date formatting -------------------------------------------------------------------

/** Built-in number format ids that are dates or times (ECMA-376 §18.8.30, plus common CJK ids). */
const BUILTIN_DATE_IDS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58]);
const BUILTIN_PERCENT: Record<number, number> = { 9: 0, 10: 2 };

export interface NumberFormat {
  kind: 'general' | 'date' | 'percent';
  /** For percent: decimals; for date: whether the format shows a date and/or a time. */
  decimals?: number;
  hasDate?: boolean;
  hasTime?: boolean;
}

/** Classifies a number format (id and, for custom formats, its code). */
export function classifyFormat(id: number, code: string | undefined): NumberFormat {
  if (code === undefined) {
    if (BUILTIN_DATE_IDS.has(id)) {
      const timeOnly = [18, 19, 20, 21, 45, 46, 47].includes(id);
      return { kind: 'date', hasDate: !timeOnly, hasTime: timeOnly || id === 22 };
    }
    if (id in BUILTIN_PERCENT) return { kind: 'percent', decimals: BUILTIN_PERCENT[id] };
    return { kind: 'general' };
  }
  const section = code.split(';')[0] ?? '';
  const bare = section
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[(?!h\]|hh\]|m\]|mm\]|s\]|ss\])[^\]]*\]/gi, '')
    .replace(/[_*]./g, '');
  if (/%/.test(bare)) {
    const decimals = /\.([0#?]+)/.exec(bare)?.[1]?.length ?? 0;
    return { kind: 'percent', decimals };
  }
  if (!/[0#?]/.test(bare) && /[dmyhs]/i.test(bare)) {
    const hasTime = /[hs]/i.test(bare);
    return { kind: 'date', hasDate: /[dy]/i.test(bare) || (/m/i.test(bare) && !hasTime), hasTime };
  }
  return { kind: 'general' };
}

/** A number as a spreadsheet shows it in General format: up to 15 significant digits, no float noise. */
export function formatGeneral(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  return String(Number(value.toPrecision(15)));
}

export function formatNumber(value: number, format: NumberFormat, date1904: boolean): string {
  if (format.kind === 'percent') return `${(value * 100).toFixed(format.decimals ?? 0)}%`;
  if (format.kind === 'date') return serialToDate(value, date1904, format.hasDate !== false, format.hasTime === true);
  return formatGeneral(value);
}

/** An Excel serial date as ISO 8601 (date, date and time, or time). */
export function serialToDate(serial: number, date1904: boolean, withDate: boolean, withTime: boolean): string {
  if (!Number.isFinite(serial) || serial < 0 || serial > 2_958_465) return formatGeneral(serial);
  // 1900 system: serial 1 = 1900-01-01, and Excel's phantom 1900-02-29 is serial 60.
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : serial < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  const ms = Math.round(serial * 86_400_000);
  const d = new Date(epoch + ms);
  const date = d.toISOString().slice(0, 10);
  const time = d.toISOString().slice(11, 19);
  if (!withTime) return date;
  if (!withDate || serial < 1) return time;
  return `${date} ${time}`;
}
