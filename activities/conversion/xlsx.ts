import type { ConversionContext } from './context.js';
import type { ConversionResult } from './convert.js';
import { ConversionError } from './errors.js';
import { normalizeMarkdown, squeeze } from './markdown.js';
import { OoxmlPackage, typeEnds } from './ooxml.js';
import { cellKey, classifyFormat, formatGeneral, formatNumber, MAX_COLUMNS, renderSheet, type NumberFormat, type SheetCells } from './sheet.js';
import { attr, child, children, descendants, rootElement } from './xml.js';

/**
 * XLSX/XLSM → Markdown with fflate + fast-xml-parser (no spreadsheet library: exceljs crashes on real
 * workbooks and the `xlsx` npm release is frozen). Each worksheet with values becomes `## <sheet name>`
 * followed by its tables (see {@link renderSheet}). Shared strings, inline strings, booleans, errors
 * and cached formula results are read; dates are written as ISO 8601 and percentages as percentages;
 * other numbers as General (no thousands separators or currency). Chart sheets and empty sheets are
 * skipped; a workbook without any value fails as empty.
 *
 * Worksheet XML is scanned with regular expressions rather than parsed into a tree: sheets are the
 * big parts of a workbook and this keeps memory flat.
 */

/** Non-empty cells read per workbook; more than this is cut off with a warning. */
const MAX_CELLS = 1_000_000;

export async function convertXlsx(bytes: Uint8Array, ctx: ConversionContext): Promise<ConversionResult> {
  const pkg = OoxmlPackage.open(bytes, ctx, 'Excel workbook');
  const main = pkg.mainPart('xl/workbook.xml');
  pkg.externalReferences();
  const workbook = rootElement(pkg.xml(main) ?? { name: '', qname: '', attrs: {}, children: [] });
  const date1904 = ['1', 'true'].includes((attr(child(workbook, 'workbookPr'), 'date1904') ?? '').toLowerCase());

  const sharedPart = pkg.targetsOfType(main, 'sharedStrings')[0];
  const shared = sharedPart ? readSharedStrings(pkg.zip.readText(sharedPart) ?? '') : [];
  const stylesPart = pkg.targetsOfType(main, 'styles')[0];
  const formats = stylesPart ? readCellFormats(pkg, stylesPart) : [];

  const sections: string[] = [];
  let budget = MAX_CELLS;
  for (const sheet of descendants(child(workbook, 'sheets'), 'sheet')) {
    await ctx.checkpoint();
    const name = squeeze(attr(sheet, 'name') ?? '') || 'Sheet';
    const rel = pkg.rels(main).find((r) => r.id === attr(sheet, 'id', true));
    if (!rel || rel.external || !typeEnds(rel.type, 'worksheet')) continue; // chart sheets, dialogs, macros
    const part = pkg.zip.resolve(rel.part ?? '');
    if (!part) continue;
    const xml = pkg.zip.readText(part) ?? '';
    const cells = readCells(xml, shared, formats, date1904, ctx, budget);
    budget -= cells.size;
    const body = renderSheet(cells);
    if (body) sections.push(`## ${name}\n\n${body}`);
    if (budget <= 0) {
      ctx.warn(`This workbook has more than ${MAX_CELLS.toLocaleString('en-US')} filled cells; the rest was not indexed.`);
      break;
    }
  }
  if (sections.length === 0) {
    throw new ConversionError('empty', 'This workbook is empty: no sheet has any cell values to index.');
  }
  return { markdown: normalizeMarkdown(sections.join('\n\n')), title: pkg.coreTitle(), warnings: ctx.warnings };
}

const TAG = '(?:[\\w.-]+:)?';
const ROW_RE = new RegExp(`<${TAG}row\\b([^>]*?)(?:/>|>([\\s\\S]*?)</${TAG}row>)`, 'g');
const CELL_RE = new RegExp(`<${TAG}c\\b([^>]*?)(?:/>|>([\\s\\S]*?)</${TAG}c>)`, 'g');
const V_RE = new RegExp(`<${TAG}v\\b[^>]*>([\\s\\S]*?)</${TAG}v>`);
const IS_RE = new RegExp(`<${TAG}is\\b[^>]*>([\\s\\S]*?)</${TAG}is>`);
const SI_RE = new RegExp(`<${TAG}si\\b[^>]*?(?:/>|>([\\s\\S]*?)</${TAG}si>)`, 'g');
const T_RE = new RegExp(`<${TAG}t\\b[^>]*?(?:/>|>([\\s\\S]*?)</${TAG}t>)`, 'g');
const RPH_RE = new RegExp(`<${TAG}rPh\\b[\\s\\S]*?</${TAG}rPh>`, 'g');
const ATTR_RE = /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function attrsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(ATTR_RE)) {
    const key = m[1]!;
    out[key.includes(':') ? key.slice(key.indexOf(':') + 1) : key] = m[2] ?? m[3] ?? '';
  }
  return out;
}

/** Rich or plain string content: the text of its `<t>` elements, phonetic runs left out. */
function stringItem(inner: string): string {
  let text = '';
  for (const m of inner.replace(RPH_RE, '').matchAll(T_RE)) text += decodeEntities(m[1] ?? '');
  // OOXML escapes characters XML cannot carry as _xHHHH_ (e.g. _x000D_ for a carriage return).
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

export function readSharedStrings(xml: string): string[] {
  const out: string[] = [];
  for (const m of xml.matchAll(SI_RE)) out.push(stringItem(m[1] ?? ''));
  return out;
}

/** cellXfs index → number format. */
function readCellFormats(pkg: OoxmlPackage, part: string): NumberFormat[] {
  const root = rootElement(pkg.xml(part) ?? { name: '', qname: '', attrs: {}, children: [] });
  const custom = new Map<number, string>();
  for (const fmt of children(child(root, 'numFmts'), 'numFmt')) {
    custom.set(Number(attr(fmt, 'numFmtId')), attr(fmt, 'formatCode') ?? '');
  }
  return children(child(root, 'cellXfs'), 'xf').map((xf) => {
    const id = Number(attr(xf, 'numFmtId') ?? '0');
    return classifyFormat(id, custom.get(id));
  });
}

/** Column letters → zero-based index (`A` → 0, `AA` → 26). */
function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

function readCells(
  xml: string,
  shared: string[],
  formats: NumberFormat[],
  date1904: boolean,
  ctx: ConversionContext,
  budget: number,
): SheetCells {
  const cells: SheetCells = new Map();
  let nextRow = 0;
  let scanned = 0;
  for (const rowMatch of xml.matchAll(ROW_RE)) {
    if (++scanned % 2000 === 0) ctx.check();
    const rowAttrs = attrsOf(rowMatch[1] ?? '');
    const row = rowAttrs.r ? Number.parseInt(rowAttrs.r, 10) - 1 : nextRow;
    nextRow = row + 1;
    if (!Number.isFinite(row) || row < 0 || row > 1_048_575) continue;
    let nextCol = 0;
    for (const cellMatch of (rowMatch[2] ?? '').matchAll(CELL_RE)) {
      const a = attrsOf(cellMatch[1] ?? '');
      let col = nextCol;
      const ref = a.r ? /^\$?([A-Za-z]{1,3})\$?(\d+)$/.exec(a.r) : null;
      if (ref) col = columnIndex(ref[1]!);
      nextCol = col + 1;
      if (col < 0 || col >= MAX_COLUMNS) continue;
      const value = cellValue(a, cellMatch[2] ?? '', shared, formats, date1904);
      if (value.trim() === '') continue;
      cells.set(cellKey(row, col), value);
      if (cells.size >= budget) return cells;
    }
  }
  return cells;
}

function cellValue(a: Record<string, string>, inner: string, shared: string[], formats: NumberFormat[], date1904: boolean): string {
  const type = a.t ?? 'n';
  if (type === 'inlineStr') {
    const is = IS_RE.exec(inner);
    return is ? stringItem(is[1] ?? '') : '';
  }
  const v = V_RE.exec(inner);
  if (!v) return '';
  const raw = decodeEntities(v[1] ?? '');
  switch (type) {
    case 's':
      return shared[Number.parseInt(raw, 10)] ?? '';
    case 'str':
    case 'e':
      return raw;
    case 'b':
      return raw.trim() === '1' ? 'TRUE' : 'FALSE';
    case 'd':
      return raw.replace(/T00:00:00(\.0+)?Z?$/, '');
    default: {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) return raw;
      const format = formats[Number.parseInt(a.s ?? '0', 10) || 0];
      return format ? formatNumber(n, format, date1904) : formatGeneral(n);
    }
  }
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  if (text.startsWith('<![CDATA[')) return text.replace(/^<!\[CDATA\[([\s\S]*?)\]\]>$/, '$1');
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, body: string) => {
    if (body[0] === '#') {
      const cp = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      return Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
    }
    return NAMED[body] ?? m;
  });
}
