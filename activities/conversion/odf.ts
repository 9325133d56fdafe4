import type { ConversionContext } from './context.js';
import type { ConversionResult } from './convert.js';
import type { BinaryFormat } from './detect.js';
import { ConversionError } from './errors.js';
import { escapeLineStart, hasText, normalizeMarkdown, renderTable, squeeze, unescapeLineStartInCell } from './markdown.js';
import { cellKey, formatGeneral, MAX_COLUMNS, renderSheet, type SheetCells } from './sheet.js';
import { anyAttr, child, children, descendants, parseXml, rootElement, textContent, type XNode } from './xml.js';
import { looksLikeZip, ZipArchive } from './zip.js';

/**
 * OpenDocument (ODT, ODP, ODS) → Markdown from content.xml, following the same conventions as the
 * OOXML converters:
 * - odt: `text:h` outline levels as headings (paragraphs styled Title/Subtitle as `#`/`##`), lists
 *   (numbered when their list style says so), tables, sections, text in frames;
 * - odp: each page as `## Slide N: <title>` with its text boxes, lists and tables, then its speaker
 *   notes under `### Notes:`;
 * - ods: each sheet as `## <name>` with its tables (same layout rules as xlsx).
 * Encrypted (password-protected) files fail as `encrypted`.
 */

const FORMAT_LABEL: Record<string, string> = { odt: 'OpenDocument text', odp: 'OpenDocument presentation', ods: 'OpenDocument spreadsheet' };
const MAX_CELLS = 1_000_000;
/** Repetitions of a non-empty row or cell that are materialised (the rest is a repeated fill). */
const MAX_REPEAT = 1000;

export async function convertOdf(bytes: Uint8Array, format: BinaryFormat, ctx: ConversionContext): Promise<ConversionResult> {
  const label = FORMAT_LABEL[format] ?? 'OpenDocument file';
  if (!looksLikeZip(bytes)) throw new ConversionError('corrupt', `This ${label} is damaged: it is not a ZIP package.`);
  const zip = ZipArchive.open(bytes, ctx, label);
  const manifest = zip.readText('META-INF/manifest.xml');
  if (manifest && /encryption-data/.test(manifest)) {
    throw new ConversionError('encrypted', `This ${label} is password-protected (encrypted); remove the password and upload it again.`);
  }
  const contentXml = zip.readText('content.xml');
  if (contentXml === undefined) throw new ConversionError('corrupt', `This ${label} is damaged: content.xml is missing.`);
  const content = rootElement(parseXml(contentXml, `${label} content`));
  const stylesXml = zip.readText('styles.xml');
  const styles = new StyleIndex([content, stylesXml ? rootElement(parseXml(stylesXml, `${label} styles`)) : undefined]);
  const body = child(content, 'body');

  let markdown: string;
  if (format === 'ods') markdown = await spreadsheet(child(body, 'spreadsheet'), ctx);
  else if (format === 'odp') markdown = await presentation(child(body, 'presentation'), styles, ctx);
  else markdown = new TextWriter(styles, ctx).blocks(child(body, 'text')).join('\n\n');
  markdown = normalizeMarkdown(markdown);
  if (!hasText(markdown)) {
    throw new ConversionError('empty', `This ${label} has no text to index.`);
  }
  const meta = zip.readText('meta.xml');
  const title = meta ? squeeze(textContent(descendants(parseXml(meta, `${label} metadata`), 'title')[0])) || undefined : undefined;
  return { markdown, title, warnings: ctx.warnings };
}

/** Paragraph and list styles by name, from automatic and common styles. */
class StyleIndex {
  private paragraphParents = new Map<string, string>();
  private listStyles = new Map<string, XNode>();

  constructor(roots: Array<XNode | undefined>) {
    for (const root of roots) {
      for (const container of [child(root, 'automatic-styles'), child(root, 'styles')]) {
        for (const style of children(container, 'style')) {
          const name = anyAttr(style, 'name');
          const parent = anyAttr(style, 'parent-style-name');
          if (name && parent) this.paragraphParents.set(name, parent);
        }
        for (const list of children(container, 'list-style')) {
          const name = anyAttr(list, 'name');
          if (name) this.listStyles.set(name, list);
        }
      }
    }
  }

  /** The style name with its parents: ['P1', 'Title']. */
  lineage(name: string | undefined): string[] {
    const out: string[] = [];
    for (let n = name; n && out.length < 20 && !out.includes(n); n = this.paragraphParents.get(n)) out.push(n);
    return out;
  }

  numbered(listStyle: string | undefined, level: number): boolean {
    const style = listStyle ? this.listStyles.get(listStyle) : undefined;
    if (!style) return false;
    for (const levelStyle of children(style)) {
      if (Number(anyAttr(levelStyle, 'level')) === level) return levelStyle.name === 'list-level-style-number' && (anyAttr(levelStyle, 'num-format') ?? '1') !== '';
    }
    return false;
  }
}

class TextWriter {
  /** How many table cells the writer is inside. */
  private cellDepth = 0;

  constructor(
    private readonly styles: StyleIndex,
    private readonly ctx: ConversionContext,
  ) {}

  blocks(container: XNode | undefined, depth = 0): string[] {
    const out: string[] = [];
    if (!container || depth > 50) return out;
    for (const node of children(container)) {
      this.ctx.check();
      switch (node.name) {
        case 'h': {
          const level = Math.min(6, Math.max(1, Number.parseInt(anyAttr(node, 'outline-level') ?? '1', 10) || 1));
          const text = squeeze(inline(node).replace(/\n/g, ' '));
          if (text) out.push(`${'#'.repeat(level)} ${text}`);
          break;
        }
        case 'p': {
          const text = inline(node).replace(/[ \t]+/g, ' ').replace(/ *\n */g, '\n').trim();
          if (!text) break;
          const lineage = this.styles.lineage(anyAttr(node, 'style-name')).map((s) => s.toLowerCase());
          if (lineage.includes('title')) out.push(`# ${text.replace(/\n/g, ' ')}`);
          else if (lineage.includes('subtitle')) out.push(`## ${text.replace(/\n/g, ' ')}`);
          else out.push(escapeLineStart(text));
          break;
        }
        case 'list': {
          const lines = this.list(node, 0, anyAttr(node, 'style-name'));
          if (lines.length > 0) out.push(lines.join('\n'));
          break;
        }
        case 'table': {
          const table = this.table(node, depth);
          if (table) out.push(table);
          break;
        }
        case 'section':
        case 'text-box':
        case 'frame':
        case 'custom-shape':
        case 'g':
        case 'deletion':
          out.push(...this.blocks(node, depth + 1));
          break;
        default:
          break; // sequence-decls, tracked-changes, table-of-content (repeats the headings), forms, ...
      }
    }
    return out;
  }

  private list(list: XNode, depth: number, style: string | undefined): string[] {
    const lines: string[] = [];
    const listStyle = anyAttr(list, 'style-name') ?? style;
    const numbered = this.styles.numbered(listStyle, depth + 1);
    let n = 0;
    for (const item of children(list).filter((c) => c.name === 'list-item' || c.name === 'list-header')) {
      let marked = false;
      for (const part of children(item)) {
        if (part.name === 'list') {
          lines.push(...this.list(part, depth + 1, listStyle));
          continue;
        }
        const text = part.name === 'p' || part.name === 'h' ? squeeze(inline(part).replace(/\n/g, ' ')) : this.blocks({ ...item, children: [part] }, 1).join(' ');
        if (!text) continue;
        const indent = '  '.repeat(depth);
        if (!marked) {
          lines.push(`${indent}${numbered ? `${++n}. ` : '* '}${text}`);
          marked = true;
        } else {
          lines.push(`${indent}${numbered ? '   ' : '  '}${text}`);
        }
      }
    }
    return lines;
  }

  private cellBlocks(cell: XNode, depth: number): string[] {
    this.cellDepth++;
    try {
      return this.blocks(cell, depth);
    } finally {
      this.cellDepth--;
    }
  }

  /**
   * A table as a GFM table; one inside a table cell as one line of that cell, as html.ts does. `depth`
   * is the nesting of blocks around it, which bounds tables nested in tables as it bounds sections.
   */
  table(table: XNode, depth = 0): string {
    const rows: string[][] = [];
    for (const row of tableRows(table)) {
      const cells: string[] = [];
      for (const cell of children(row).filter((c) => c.name === 'table-cell' || c.name === 'covered-table-cell')) {
        const blocks = cell.name === 'covered-table-cell' ? [] : this.cellBlocks(cell, depth + 1);
        // A cell holding a one-item list (common in slides) is just that item's text.
        const single = blocks.length === 1 && !blocks[0]!.includes('\n') ? blocks[0]!.replace(/^(?:\*|\d+\.) /, '') : undefined;
        const text = (single !== undefined ? [single] : blocks.map((b) => b.replace(/^(\s*)[*] /gm, '$1• ')))
          .map((block) => block.split('\n').map(unescapeLineStartInCell).join('\n'))
          .join(' ');
        const repeat = Math.min(MAX_REPEAT, Number.parseInt(anyAttr(cell, 'number-columns-repeated') ?? '1', 10) || 1);
        for (let i = 0; i < repeat; i++) cells.push(text);
      }
      rows.push(cells);
    }
    if (this.cellDepth > 0) return rows.map((cells) => cells.map((c) => c.replace(/\s+/g, ' ').trim()).filter(Boolean).join(', ')).filter(Boolean).join('; ');
    return renderTable(rows);
  }
}

/** Rows of a table, through header-rows, row-groups and rows containers. */
function tableRows(table: XNode): XNode[] {
  const out: XNode[] = [];
  for (const c of children(table)) {
    if (c.name === 'table-row') out.push(c);
    else if (['table-header-rows', 'table-row-group', 'table-rows'].includes(c.name)) out.push(...tableRows(c));
  }
  return out;
}

/** Inline text of a paragraph or heading: spans, links, spaces, tabs, line breaks, text in frames. */
function inline(node: XNode): string {
  let out = '';
  const stack: XNode[] = [...node.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    switch (n.name) {
      case '#text':
        out += (n.text ?? '').replace(/\s+/g, ' ');
        break;
      case 's':
        out += ' '.repeat(Math.min(100, Number.parseInt(anyAttr(n, 'c') ?? '1', 10) || 1));
        break;
      case 'tab':
        out += ' ';
        break;
      case 'line-break':
        out += '\n';
        break;
      case 'note-citation':
      case 'annotation':
      case 'annotation-end':
      case 'bookmark':
      case 'bookmark-start':
      case 'bookmark-end':
        break;
      case 'note-body':
        out += ` [${squeeze(textContent(n))}]`;
        break;
      case 'p':
      case 'h':
        if (out && !out.endsWith('\n')) out += '\n';
        for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
        break;
      default:
        for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
  return out;
}

async function presentation(pres: XNode | undefined, styles: StyleIndex, ctx: ConversionContext): Promise<string> {
  const out: string[] = [];
  const writer = new TextWriter(styles, ctx);
  for (const [i, page] of children(pres, 'page').entries()) {
    await ctx.checkpoint();
    let title = '';
    const blocks: string[] = [];
    const shapes = (container: XNode | undefined, depth: number): void => {
      if (!container || depth > 50) return;
      for (const shape of children(container)) {
        if (shape.name === 'g') {
          shapes(shape, depth + 1);
          continue;
        }
        if (shape.name !== 'frame' && shape.name !== 'custom-shape' && shape.name !== 'rect') continue;
        const cls = anyAttr(shape, 'class') ?? '';
        if (['page-number', 'date-time', 'footer', 'header', 'page'].includes(cls)) continue;
        if (cls === 'title' && !title) {
          title = squeeze(inline(child(shape, 'text-box') ?? shape).replace(/\n/g, ' '));
          if (title) continue;
        }
        const table = child(shape, 'table');
        if (table) {
          const md = writer.table(table);
          if (md) blocks.push(md);
          continue;
        }
        blocks.push(...writer.blocks(child(shape, 'text-box') ?? shape, 1));
      }
    };
    shapes(page, 0);
    const notes = child(page, 'notes');
    const noteBlocks: string[] = [];
    for (const frame of descendants(notes, 'frame')) {
      if (anyAttr(frame, 'class') !== 'notes') continue;
      noteBlocks.push(...writer.blocks(child(frame, 'text-box'), 1));
    }
    if (!title && blocks.length === 0 && noteBlocks.length === 0) continue;
    out.push(title ? `## Slide ${i + 1}: ${title}` : `## Slide ${i + 1}`, ...blocks);
    if (noteBlocks.length > 0) out.push('### Notes:', ...noteBlocks);
  }
  return out.join('\n\n');
}

async function spreadsheet(sheet: XNode | undefined, ctx: ConversionContext): Promise<string> {
  const sections: string[] = [];
  let budget = MAX_CELLS;
  for (const table of children(sheet, 'table')) {
    await ctx.checkpoint();
    const name = squeeze(anyAttr(table, 'name') ?? '') || 'Sheet';
    const cells: SheetCells = new Map();
    let row = 0;
    for (const tr of tableRows(table)) {
      ctx.check();
      const rowRepeat = Math.max(1, Number.parseInt(anyAttr(tr, 'number-rows-repeated') ?? '1', 10) || 1);
      const values: Array<[number, string]> = [];
      let col = 0;
      for (const cell of children(tr).filter((c) => c.name === 'table-cell' || c.name === 'covered-table-cell')) {
        const repeat = Math.max(1, Number.parseInt(anyAttr(cell, 'number-columns-repeated') ?? '1', 10) || 1);
        const value = cell.name === 'table-cell' ? odsValue(cell) : '';
        if (value) for (let k = 0; k < Math.min(repeat, MAX_REPEAT) && col + k < MAX_COLUMNS; k++) values.push([col + k, value]);
        col += repeat;
      }
      if (values.length > 0) {
        for (let r = 0; r < Math.min(rowRepeat, MAX_REPEAT) && budget > 0; r++) {
          for (const [c, v] of values) cells.set(cellKey(row + r, c), v);
          budget -= values.length;
        }
      }
      row += rowRepeat;
      if (budget <= 0 || row > 1_048_576) break;
    }
    const body = renderSheet(cells);
    if (body) sections.push(`## ${name}\n\n${body}`);
    if (budget <= 0) {
      ctx.warn(`This spreadsheet has more than ${MAX_CELLS.toLocaleString('en-US')} filled cells; the rest was not indexed.`);
      break;
    }
  }
  if (sections.length === 0) throw new ConversionError('empty', 'This spreadsheet is empty: no sheet has any cell values to index.');
  return sections.join('\n\n');
}

function odsValue(cell: XNode): string {
  const type = anyAttr(cell, 'value-type');
  const text = children(cell, 'p')
    .map((p) => squeeze(inline(p)))
    .filter(Boolean)
    .join(' ');
  switch (type) {
    case 'float':
    case 'currency': {
      const n = Number(anyAttr(cell, 'value'));
      return Number.isFinite(n) ? formatGeneral(n) : text;
    }
    case 'percentage': {
      const n = Number(anyAttr(cell, 'value'));
      if (!Number.isFinite(n)) return text;
      return `${formatGeneral(Number((n * 100).toPrecision(12)))}%`;
    }
    case 'date':
      return (anyAttr(cell, 'date-value') ?? text).replace(/T00:00:00(\.0+)?$/, '').replace('T', ' ');
    case 'time': {
      const m = /^PT(\d+)H(\d+)M(\d+(?:\.\d+)?)S$/.exec(anyAttr(cell, 'time-value') ?? '');
      return m ? `${m[1]!.padStart(2, '0')}:${m[2]!.padStart(2, '0')}:${String(Math.floor(Number(m[3]))).padStart(2, '0')}` : text;
    }
    case 'boolean':
      return (anyAttr(cell, 'boolean-value') ?? text).toLowerCase() === 'true' ? 'TRUE' : 'FALSE';
    default:
      return text;
  }
}
