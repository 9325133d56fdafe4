import { chartToMarkdown } from './chart.js';
import type { ConversionContext } from './context.js';
import type { ConversionResult } from './convert.js';
import { ConversionError } from './errors.js';
import { escapeLineStart, hasText, normalizeMarkdown, renderTable, squeeze } from './markdown.js';
import { OoxmlPackage } from './ooxml.js';
import { attr, child, children, descendants, firstDescendant, path, rootElement, textContent, type XNode } from './xml.js';

/**
 * PPTX → Markdown with fflate + fast-xml-parser. Each slide, in presentation order, becomes
 * `## Slide N: <title>` (or `## Slide N` when it has no title) followed by its text boxes, lists
 * (bullets inherited from body placeholders or set explicitly), tables, chart data, SmartArt text and
 * picture alt text, then its speaker notes (from `ppt/notesSlides`) under `### Notes:` when they
 * have text. Slide numbers, dates and footers are left out.
 */

const SKIPPED_PLACEHOLDERS = new Set(['sldNum', 'dt', 'ftr', 'hdr', 'sldImg']);
const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);
const BODY_PLACEHOLDERS = new Set(['body', 'obj']);

export async function convertPptx(bytes: Uint8Array, ctx: ConversionContext): Promise<ConversionResult> {
  const pkg = OoxmlPackage.open(bytes, ctx, 'PowerPoint presentation');
  const main = pkg.mainPart('ppt/presentation.xml');
  pkg.externalReferences();
  const presentation = rootElement(pkg.xml(main) ?? emptyDoc());

  let slides = descendants(child(presentation, 'sldIdLst'), 'sldId')
    .map((s) => pkg.target(main, attr(s, 'id', true)))
    .filter((p): p is string => p !== undefined);
  if (slides.length === 0) {
    slides = pkg.targetsOfType(main, 'slide').sort((a, b) => partNumber(a) - partNumber(b));
  }

  const out: string[] = [];
  for (const [i, slidePart] of slides.entries()) {
    await ctx.checkpoint();
    const slide = new SlideReader(pkg, slidePart, ctx);
    const root = rootElement(pkg.xml(slidePart) ?? emptyDoc());
    const tree = path(root, 'cSld', 'spTree');
    slide.shapes(tree);
    const notesPart = pkg.targetsOfType(slidePart, 'notesSlide')[0];
    const notes = notesPart ? notesText(rootElement(pkg.xml(notesPart) ?? emptyDoc())) : '';
    // A slide with nothing to read (a picture without alt text) gets no section of its own.
    if (!slide.title && slide.blocks.length === 0 && !notes) continue;
    out.push(slide.title ? `## Slide ${i + 1}: ${slide.title}` : `## Slide ${i + 1}`, ...slide.blocks);
    if (notes) out.push('### Notes:', notes);
  }
  const markdown = normalizeMarkdown(out.join('\n\n'));
  if (!hasText(markdown)) {
    throw new ConversionError('empty', 'This presentation has no text to index (no slide has text, tables, charts or notes).');
  }
  return { markdown, title: pkg.coreTitle(), warnings: ctx.warnings };
}

class SlideReader {
  title = '';
  readonly blocks: string[] = [];

  constructor(
    private readonly pkg: OoxmlPackage,
    private readonly part: string,
    private readonly ctx: ConversionContext,
  ) {}

  shapes(container: XNode | undefined, depth = 0): void {
    if (!container || depth > 50) return;
    for (const node of children(container)) {
      this.ctx.check();
      switch (node.name) {
        case 'sp':
          this.shape(node);
          break;
        case 'grpSp':
          this.shapes(node, depth + 1);
          break;
        case 'graphicFrame':
          this.graphicFrame(node);
          break;
        case 'pic': {
          const alt = pictureAlt(node);
          if (alt) this.blocks.push(`[Image: ${alt}]`);
          break;
        }
        case 'AlternateContent': {
          const choice = child(node, 'Choice') ?? child(node, 'Fallback');
          this.shapes(choice, depth + 1);
          break;
        }
        default:
          break;
      }
    }
  }

  private shape(sp: XNode): void {
    const ph = path(sp, 'nvSpPr', 'nvPr', 'ph');
    const type = ph ? (attr(ph, 'type') ?? 'obj') : undefined;
    if (type && SKIPPED_PLACEHOLDERS.has(type)) return;
    const body = child(sp, 'txBody');
    if (!body) return;
    if (type && TITLE_PLACEHOLDERS.has(type) && !this.title) {
      this.title = squeeze(paragraphs(body).map((p) => p.text.replace(/\n/g, ' ')).join(' '));
      if (this.title) return;
    }
    const text = textBody(body, type !== undefined && BODY_PLACEHOLDERS.has(type));
    if (text) this.blocks.push(text);
  }

  private graphicFrame(frame: XNode): void {
    const data = path(frame, 'graphic', 'graphicData');
    if (!data) return;
    const table = child(data, 'tbl');
    if (table) {
      const md = tableToMarkdown(table);
      if (md) this.blocks.push(md);
      return;
    }
    const chartRef = child(data, 'chart');
    if (chartRef) {
      const target = this.pkg.target(this.part, attr(chartRef, 'id', true));
      const md = target ? chartToMarkdown(this.pkg.xml(target)) : '';
      if (md) this.blocks.push(md);
      return;
    }
    const diagram = child(data, 'relIds');
    if (diagram) {
      const target = this.pkg.target(this.part, attr(diagram, 'dm', true));
      const items = target ? smartArtText(this.pkg.xml(target)) : [];
      if (items.length > 0) this.blocks.push(items.map((t) => `* ${t}`).join('\n'));
    }
  }
}

interface Paragraph {
  text: string;
  level: number;
  bullet: 'bullet' | 'number' | 'none' | 'inherit';
  startAt: number;
}

function paragraphs(body: XNode): Paragraph[] {
  return children(body, 'p').map((p) => {
    const pPr = child(p, 'pPr');
    let text = '';
    for (const part of children(p)) {
      if (part.name === 'r' || part.name === 'fld') text += textContent(child(part, 't'));
      else if (part.name === 'br') text += '\n';
    }
    const autoNum = child(pPr, 'buAutoNum');
    const bullet = child(pPr, 'buNone') ? 'none' : child(pPr, 'buChar') || child(pPr, 'buBlip') ? 'bullet' : autoNum ? 'number' : 'inherit';
    return {
      text: text.replace(/[\t \u00a0]+/g, ' ').replace(/ *\n */g, '\n').trim(),
      level: Math.min(8, Number.parseInt(attr(pPr, 'lvl') ?? '0', 10) || 0),
      bullet,
      startAt: Number.parseInt(attr(autoNum, 'startAt') ?? '1', 10) || 1,
    };
  });
}

/** A text body as Markdown: list paragraphs as `*`/`1.` items (indented by level), others as paragraphs. */
function textBody(body: XNode, bulletsByDefault: boolean): string {
  const blocks: string[] = [];
  let list: string[] = [];
  const counters: number[] = [];
  const flush = () => {
    if (list.length > 0) blocks.push(list.join('\n'));
    list = [];
    counters.length = 0;
  };
  for (const p of paragraphs(body)) {
    if (!p.text) continue;
    const kind = p.bullet === 'inherit' ? (bulletsByDefault ? 'bullet' : 'none') : p.bullet;
    if (kind === 'none') {
      flush();
      blocks.push(escapeLineStart(p.text));
      continue;
    }
    counters.length = p.level + 1;
    const indent = '  '.repeat(p.level);
    const line = p.text.replace(/\n/g, ' ');
    if (kind === 'number') {
      const n = (counters[p.level] ?? p.startAt - 1) + 1;
      counters[p.level] = n;
      list.push(`${indent}${n}. ${line}`);
    } else {
      list.push(`${indent}* ${line}`);
    }
  }
  flush();
  return blocks.join('\n\n');
}

function tableToMarkdown(tbl: XNode): string {
  const rows = children(tbl, 'tr').map((tr) =>
    children(tr, 'tc').map((tc) => {
      if (attr(tc, 'hMerge') === '1' || attr(tc, 'vMerge') === '1') return '';
      const body = child(tc, 'txBody');
      return body ? paragraphs(body).map((p) => p.text).filter(Boolean).join(' ') : '';
    }),
  );
  return renderTable(rows);
}

function pictureAlt(pic: XNode): string {
  const props = path(pic, 'nvPicPr', 'cNvPr');
  return (attr(props, 'descr') ?? attr(props, 'title') ?? '').replace(/\s+/g, ' ').trim().replace(/[[\]]/g, '');
}

/** SmartArt: the text of the diagram's data-model points, in order. */
function smartArtText(doc: XNode | undefined): string[] {
  const items: string[] = [];
  for (const pt of descendants(doc, 'pt')) {
    const type = attr(pt, 'type') ?? 'node';
    if (type !== 'node') continue;
    const t = child(pt, 't');
    if (!t) continue;
    const text = squeeze(children(t, 'p').map((p) => textContent(p)).join(' '));
    if (text) items.push(text);
  }
  return items;
}

/** Speaker notes: the text of the notes page's body placeholder(s). */
function notesText(root: XNode | undefined): string {
  const tree = path(root, 'cSld', 'spTree');
  const parts: string[] = [];
  for (const sp of descendants(tree, 'sp')) {
    const ph = path(sp, 'nvSpPr', 'nvPr', 'ph');
    const type = attr(ph, 'type');
    if (!ph || type !== 'body') continue;
    const body = child(sp, 'txBody');
    const text = body ? textBody(body, false) : '';
    if (text) parts.push(text);
  }
  // Some writers put notes in a placeholder without type; fall back to any non-structural text.
  if (parts.length === 0) {
    for (const sp of descendants(tree, 'sp')) {
      const type = attr(path(sp, 'nvSpPr', 'nvPr', 'ph'), 'type');
      if (type && (SKIPPED_PLACEHOLDERS.has(type) || type === 'sldImg')) continue;
      const body = firstDescendant(sp, 'txBody');
      const text = body ? textBody(body, false) : '';
      if (text && !/^\d+$/.test(text)) parts.push(text);
    }
  }
  return parts.join('\n\n');
}

function partNumber(part: string): number {
  return Number.parseInt(/(\d+)\.xml$/i.exec(part)?.[1] ?? '0', 10);
}

function emptyDoc(): XNode {
  return { name: '#document', qname: '#document', attrs: {}, children: [] };
}
