import { createRequire } from 'node:module';
import TurndownService from 'turndown';
import { escapeLineStart, normalizeMarkdown, renderTable, squeeze, unescapeLineStartInCell } from './markdown.js';

/**
 * HTML → Markdown with turndown, plus the rules turndown lacks:
 * - tables: any table, with or without a header row, becomes a GFM pipe table (the first row is the
 *   header when there is no <th>/<thead>); colspan/rowspan keep columns aligned; cell content is
 *   flattened to one line; nested tables are flattened into their cell; no raw HTML is ever left;
 * - one-space list markers (`* item`, `1. item`), `~~strike~~`, definition lists, images as their
 *   alt text only (never data: URIs), in-page anchors as plain text;
 * - page clean-up for standalone web pages: the main content (`#mw-content-text`, `<main>`,
 *   `[role=main]`, a single `<article>`) is kept and navigation, scripts, forms and hidden elements
 *   are dropped.
 *
 * Parsing uses the HTML parser turndown itself depends on (`@mixmark-io/domino`), resolved through
 * turndown so no other package is needed.
 */

/** The slice of the DOM API this module uses (the project compiles without the DOM lib). */
interface DomNode {
  nodeType: number;
  nodeName: string;
  localName?: string;
  parentNode: DomElement | null;
  firstChild: DomNode | null;
  childNodes: ArrayLike<DomNode>;
  textContent: string | null;
  nextSibling: DomNode | null;
}

interface DomElement extends DomNode {
  children: ArrayLike<DomElement>;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  remove(): void;
  appendChild(node: DomNode): DomNode;
  insertBefore(node: DomNode, before: DomNode | null): DomNode;
  cloneNode(deep: boolean): DomElement;
}

interface DomDocument {
  title: string;
  body: DomElement | null;
  documentElement: DomElement;
  createElement(name: string): DomElement;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

const requireHere = createRequire(import.meta.url);
const domino = createRequire(requireHere.resolve('turndown'))('@mixmark-io/domino') as {
  createDocument(html: string): DomDocument;
};

export interface HtmlToMarkdownOptions {
  /**
   * Keep only the page's main content and drop site chrome (navigation, sidebars, footers, forms).
   * For web pages; leave off for HTML produced from a document (docx, epub), which is all content.
   */
  mainContent?: boolean;
}

export interface HtmlConversion {
  markdown: string;
  title?: string;
}

/** Converts an HTML string to Markdown; see the module comment for the rules. */
export function htmlToMarkdown(html: string, options: HtmlToMarkdownOptions = {}): HtmlConversion {
  const doc = domino.createDocument(html);
  unwrapInvalidElements(doc);
  const title = squeeze(doc.title ?? '') || undefined;
  const root = options.mainContent ? mainContent(doc) : (doc.body ?? doc.documentElement);
  removeAll(root, ALWAYS_DROP);
  if (options.mainContent) removeAll(root, PAGE_CHROME);
  const markdown = normalizeMarkdown(turndown().turndown(root as unknown as TurndownService.Node));
  return { markdown, title };
}

/** Elements whose content is never document text. */
const ALWAYS_DROP = [
  'script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'iframe', 'object', 'embed',
  'svg', 'canvas', 'audio', 'video', 'map', 'button', 'input', 'select', 'textarea', '[hidden]',
  '[aria-hidden="true"]', '[style*="display:none"]', '[style*="display: none"]',
].join(',');

/** Site chrome dropped from web pages (mainContent). MediaWiki classes cover Wikipedia pages. */
const PAGE_CHROME = [
  'nav', 'aside', 'footer', 'form', 'dialog', 'label', '[role="navigation"]', '[role="search"]',
  '[role="banner"]', '[role="contentinfo"]', '[role="complementary"]', '.mw-editsection', '.mw-jump-link',
  '.navbox', '.vertical-navbox', '.sistersitebox', '#toc', '.toc', '.mw-indicators', '.printfooter',
  '.catlinks', '.noprint', '.mw-cite-backlink', 'sup.reference', '.metadata', '.ambox',
].join(',');

/**
 * The HTML parser accepts element names that the DOM cannot create again (garbage such as `<a"b>`),
 * and turndown clones its input: such elements are replaced by their children first.
 */
function unwrapInvalidElements(doc: DomDocument): void {
  const verdicts = new Map<string, boolean>();
  for (const el of Array.from(doc.querySelectorAll('*'))) {
    const name = el.localName ?? el.nodeName.toLowerCase();
    if (/^[a-z][a-z0-9-]*$/.test(name)) continue;
    let valid = verdicts.get(name);
    if (valid === undefined) {
      try {
        doc.createElement(name);
        valid = true;
      } catch {
        valid = false;
      }
      verdicts.set(name, valid);
    }
    if (valid) continue;
    const parent = el.parentNode;
    if (!parent) continue;
    while (el.firstChild) parent.insertBefore(el.firstChild, el);
    el.remove();
  }
}

function removeAll(root: DomElement, selector: string): void {
  for (const el of Array.from(root.querySelectorAll(selector))) el.remove();
}

function mainContent(doc: DomDocument): DomElement {
  const body = doc.body ?? doc.documentElement;
  const wiki = doc.querySelector('#mw-content-text');
  if (wiki) {
    // MediaWiki: the article body sits apart from its title heading.
    const container = doc.createElement('div');
    const heading = doc.querySelector('#firstHeading');
    if (heading) container.appendChild(heading.cloneNode(true));
    container.appendChild(wiki.cloneNode(true));
    return container;
  }
  const main = doc.querySelector('main') ?? doc.querySelector('[role="main"]');
  if (main && hasWords(main)) return main;
  const articles = doc.querySelectorAll('article');
  if (articles.length === 1 && hasWords(articles[0]!)) return articles[0]!;
  return body;
}

function hasWords(el: DomElement): boolean {
  return (el.textContent ?? '').trim().length > 200;
}

// Table cells and rows travel from the cell rules up to the table rule inside private-use markers.
const CELL = '\uE000';
const CELL_END = '\uE001';
const ROW = '\uE002';
const ROW_END = '\uE003';
const META_END = '\uE004';
const CAPTION = '\uE005';
const CAPTION_END = '\uE006';

let service: TurndownService | undefined;

function turndown(): TurndownService {
  if (service) return service;
  const td = new TurndownService({
    headingStyle: 'atx',
    hr: '---',
    br: '',
    bulletListMarker: '*',
    codeBlockStyle: 'fenced',
    emDelimiter: '*',
    strongDelimiter: '**',
    linkStyle: 'inlined',
  });

  td.addRule('tableCell', {
    filter: ['th', 'td'],
    replacement: (content, node) => {
      const el = node as unknown as DomElement;
      const colspan = clampSpan(el.getAttribute('colspan'));
      const rowspan = clampSpan(el.getAttribute('rowspan'));
      return `${CELL}${colspan},${rowspan}${META_END}${stripMarkers(content)}${CELL_END}`;
    },
  });
  td.addRule('tableRow', {
    filter: 'tr',
    replacement: (content) => `${ROW}${content}${ROW_END}`,
  });
  td.addRule('tableCaption', {
    filter: 'caption',
    replacement: (content) => `${CAPTION}${stripMarkers(content)}${CAPTION_END}`,
  });
  td.addRule('tableSection', {
    filter: ['thead', 'tbody', 'tfoot', 'colgroup', 'col'],
    replacement: (content) => content,
  });
  td.addRule('table', {
    filter: 'table',
    replacement: (content, node) => renderHtmlTable(content, node as unknown as DomElement),
  });

  td.addRule('listItem', {
    filter: 'li',
    replacement: (content, node) => {
      const el = node as unknown as DomElement;
      const parent = el.parentNode as DomElement | null;
      let prefix = '* ';
      if (parent && parent.nodeName === 'OL') {
        const start = Number.parseInt(parent.getAttribute('start') ?? '', 10);
        const index = Array.prototype.indexOf.call(parent.children, el) as number;
        prefix = `${(Number.isFinite(start) ? start : 1) + Math.max(0, index)}. `;
      }
      const body = content.replace(/^\n+/, '').replace(/\n+$/, '\n').replace(/\n(?=.)/g, `\n${' '.repeat(prefix.length)}`);
      return prefix + body + (el.nextSibling && !/\n$/.test(body) ? '\n' : '');
    },
  });

  td.addRule('strikethrough', {
    filter: ['del', 's', 'strike'] as TurndownService.Filter,
    replacement: (content) => (content.trim() ? `~~${content}~~` : content),
  });
  td.addRule('definitionTerm', {
    filter: 'dt',
    replacement: (content) => (content.trim() ? `\n\n**${content.trim()}**\n\n` : ''),
  });
  td.addRule('definitionDescription', {
    filter: 'dd',
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  });

  td.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const alt = ((node as unknown as DomElement).getAttribute('alt') ?? '').replace(/\s+/g, ' ').trim();
      return alt ? `[Image: ${alt.replace(/[[\]]/g, '')}]` : '';
    },
  });

  td.addRule('link', {
    filter: (node) => node.nodeName === 'A',
    replacement: (content, node) => {
      const el = node as unknown as DomElement;
      const text = content.trim();
      if (!text) return '';
      if (text === '↑' || text === '^') return ''; // back-references of footnotes and comments
      if (/^\[Image: [^\]]*\]$/.test(text)) return text; // a linked image: its alt text is the content
      const href = (el.getAttribute('href') ?? '').trim();
      if (!href || href.startsWith('#') || /^(javascript|data|vbscript|file):/i.test(href)) return content;
      const title = squeeze(el.getAttribute('title') ?? '');
      const dest = href.replace(/[()\s]/g, (c) => encodeURIComponent(c));
      const leading = /^\s/.test(content) ? ' ' : '';
      const trailing = /\s$/.test(content) ? ' ' : '';
      return `${leading}[${text}](${dest}${title ? ` "${title.replace(/"/g, '\\"')}"` : ''})${trailing}`;
    },
  });

  service = td;
  return td;
}

function clampSpan(value: string | null): number {
  const n = Number.parseInt(value ?? '', 10);
  return Number.isFinite(n) && n > 1 ? Math.min(n, 1000) : 1;
}

function stripMarkers(text: string): string {
  return text.replace(/[\uE000-\uE006]/g, '');
}

interface ParsedCell {
  colspan: number;
  rowspan: number;
  text: string;
}

function renderHtmlTable(content: string, node: DomElement): string {
  const rows: ParsedCell[][] = [];
  for (const rowMatch of content.matchAll(/\uE002([\s\S]*?)\uE003/g)) {
    const cells: ParsedCell[] = [];
    for (const cellMatch of rowMatch[1]!.matchAll(/\uE000(\d+),(\d+)\uE004([\s\S]*?)\uE001/g)) {
      cells.push({ colspan: Number(cellMatch[1]), rowspan: Number(cellMatch[2]), text: cellMatch[3]! });
    }
    rows.push(cells);
  }
  const caption = /\uE005([\s\S]*?)\uE006/.exec(content)?.[1]?.trim();
  const grid = layoutGrid(rows);
  const nested = isInsideTableCell(node);
  const cellCount = grid.reduce((n, row) => n + row.filter((c) => c.trim() !== '').length, 0);
  if (cellCount === 0) return caption ? `\n\n${caption}\n\n` : '';

  // A one-column table (often a layout table) or a table inside a table cell is not tabular data
  // worth a grid: keep its content as blocks, or as one line inside the outer cell.
  const width = Math.max(...grid.map((r) => r.length));
  if (nested) {
    const lines = grid.map((row) => row.map(flattenCell).filter(Boolean).join(', ')).filter(Boolean);
    return ` ${[caption, ...lines].filter(Boolean).join('; ')} `;
  }
  if (width <= 1) {
    const blocks = grid.map((row) => (row[0] ?? '').trim()).filter(Boolean);
    return `\n\n${[caption, ...blocks].filter(Boolean).join('\n\n')}\n\n`;
  }
  // Leading rows holding a single cell over a wider table (a logo, a title) are not a header: they
  // go above the table, so the header repeated in every chunk of a long table is a real one.
  let rows2 = grid.map((row) => row.map(flattenCell));
  const above: string[] = caption ? [squeeze(caption)] : [];
  while (rows2.length >= 3 && rows2[0]!.filter((c) => c !== '').length === 1) {
    above.push(rows2[0]!.find((c) => c !== '')!);
    rows2 = rows2.slice(1);
  }
  const table = renderTable(rows2);
  return `\n\n${above.map((a) => `${escapeLineStart(a)}\n\n`).join('')}${table}\n\n`;
}

/** Places cells on a grid honouring colspan and rowspan (spanned slots are left empty). */
function layoutGrid(rows: ParsedCell[][]): string[][] {
  const grid: string[][] = [];
  const pending: Array<number> = []; // rows still covered by a rowspan, per column
  for (const cells of rows) {
    const out: string[] = [];
    let col = 0;
    const skipCovered = () => {
      while ((pending[col] ?? 0) > 0) {
        out[col] = '';
        pending[col]!--;
        col++;
      }
    };
    for (const cell of cells) {
      skipCovered();
      out[col] = cell.text;
      for (let k = 0; k < cell.colspan; k++) {
        if (k > 0) out[col + k] = '';
        if (cell.rowspan > 1) pending[col + k] = Math.max(pending[col + k] ?? 0, cell.rowspan - 1);
      }
      col += cell.colspan;
    }
    for (let c = col; c < pending.length; c++) {
      if ((pending[c] ?? 0) > 0) {
        out[c] = '';
        pending[c]!--;
      }
    }
    for (let c = 0; c < out.length; c++) out[c] ??= '';
    grid.push(out);
  }
  return grid;
}

/**
 * One line of cell text: blocks joined by spaces, list markers kept readable, no table syntax, and no
 * escapes of what would start a block (see unescapeLineStartInCell).
 */
function flattenCell(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^\|?\s*:?-{3,}/.test(line))
    .map((line) => unescapeLineStartInCell(line.replace(/^[*+-] /, '• ')))
    .join(' ');
}

function isInsideTableCell(node: DomElement): boolean {
  for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === 'TD' || p.nodeName === 'TH') return true;
  return false;
}
