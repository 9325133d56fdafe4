/**
 * Markdown → retrieval chunks of about `targetChars` characters that follow the document's structure.
 *
 * 1. Headings first: the document is cut into sections at ATX (`## x`) and setext headings; every
 *    chunk lies inside one section and carries that section's heading path (`['Guide', 'Install']`).
 *    A heading directly followed by a deeper heading travels with its first subsection's chunk.
 * 2. Inside a section, blocks (paragraphs, lists, tables, code fences, quotes) are packed greedily up
 *    to the target; a chunk may grow to the soft maximum (1.3 × target by default) rather than leave
 *    a small fragment behind.
 * 3. A block bigger than the soft maximum is split by its own structure: a table by rows (every piece
 *    repeats the header row and separator), a list by items, a code fence by lines (each piece
 *    re-fenced; fences are split only when bigger than the soft maximum), prose by blank lines, then
 *    lines, then sentences, then spaces — never inside a word. Only a "word" longer than the soft
 *    maximum (a URL, base64, CJK text without spaces) is cut, at a code-point boundary.
 *
 * Sizes are measured in UTF-16 code units (JavaScript string length). The output is a pure function
 * of the input and options.
 */

export interface Chunk {
  content: string;
  headingPath: string[];
  index: number;
}

export interface ChunkOptions {
  /** Preferred chunk size in characters. Default 1000. */
  targetChars?: number;
  /** Soft maximum; chunks exceed it only for unsplittable content. Default round(1.3 × targetChars). */
  maxChars?: number;
}

export const DEFAULT_TARGET_CHARS = 1000;

type BlockKind = 'paragraph' | 'list' | 'table' | 'code' | 'heading';

interface Block {
  kind: BlockKind;
  text: string;
  /** For headings. */
  level?: number;
  title?: string;
}

interface Section {
  headingPath: string[];
  /** Heading lines of this section (and of empty parent sections carried along). */
  headings: string[];
  blocks: Block[];
}

export function chunkMarkdown(markdown: string, options: ChunkOptions = {}): Chunk[] {
  const target = Math.max(50, Math.floor(options.targetChars ?? DEFAULT_TARGET_CHARS));
  const max = Math.max(target, Math.floor(options.maxChars ?? Math.round(target * 1.3)));
  const sections = toSections(parseBlocks(markdown.replace(/\r\n?/g, '\n')));
  const chunks: Chunk[] = [];
  for (const section of sections) {
    for (const content of chunkSection(section, target, max)) {
      const text = content.trim();
      if (text) chunks.push({ content: text, headingPath: [...section.headingPath], index: chunks.length });
    }
  }
  return chunks;
}

// ---- parsing ------------------------------------------------------------------------------------

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^( {0,3})(?:[*+-]|\d{1,9}[.)])(?:[ \t]+|$)/;
const TABLE_SEPARATOR = /^ {0,3}\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;

function parseBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let i = 0;
  const isBlank = (line: string | undefined) => line === undefined || line.trim() === '';
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      const title = cleanHeading(atx[2] ?? '');
      blocks.push({ kind: 'heading', text: line.trim(), level: atx[1]!.length, title });
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1]!;
      let j = i + 1;
      while (j < lines.length) {
        const close = FENCE.exec(lines[j]!);
        if (close && close[1]![0] === marker[0] && close[1]!.length >= marker.length && lines[j]!.trim() === close[1]) break;
        j++;
      }
      const end = Math.min(j, lines.length - 1);
      blocks.push({ kind: 'code', text: lines.slice(i, end + 1).join('\n') });
      i = end + 1;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      let j = i + 2;
      while (j < lines.length && !isBlank(lines[j]) && lines[j]!.includes('|')) j++;
      blocks.push({ kind: 'table', text: lines.slice(i, j).join('\n') });
      i = j;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      // A list runs until a blank line followed by a non-indented, non-item line (or a new block type).
      let j = i + 1;
      while (j < lines.length) {
        const l = lines[j]!;
        if (isBlank(l)) {
          const next = lines[j + 1];
          if (next !== undefined && !isBlank(next) && (LIST_ITEM.test(next) || /^\s{2,}\S/.test(next))) {
            j++;
            continue;
          }
          break;
        }
        if (ATX.test(l) || FENCE.test(l)) break;
        j++;
      }
      blocks.push({ kind: 'list', text: lines.slice(i, j).join('\n') });
      i = j;
      continue;
    }
    // A paragraph: until a blank line or the start of another block.
    let j = i + 1;
    while (j < lines.length && !isBlank(lines[j]) && !ATX.test(lines[j]!) && !FENCE.test(lines[j]!) && !LIST_ITEM.test(lines[j]!)) {
      if (lines[j]!.includes('|') && j + 1 < lines.length && TABLE_SEPARATOR.test(lines[j + 1]!) && lines[j + 1]!.includes('-')) break;
      const setext = SETEXT.exec(lines[j]!);
      if (setext) break;
      j++;
    }
    const setext = j < lines.length ? SETEXT.exec(lines[j]!) : null;
    if (setext && !line.trimStart().startsWith('>')) {
      // Setext heading: the paragraph's lines are the title.
      const title = cleanHeading(lines.slice(i, j).join(' '));
      blocks.push({ kind: 'heading', text: lines.slice(i, j + 1).join('\n'), level: setext[1]![0] === '=' ? 1 : 2, title });
      i = j + 1;
      continue;
    }
    blocks.push({ kind: 'paragraph', text: lines.slice(i, j).join('\n') });
    i = j;
  }
  return blocks;
}

/** Heading text for the path: trimmed, without closing hashes or escape backslashes. */
function cleanHeading(text: string): string {
  return text
    .replace(/[ \t]+#+[ \t]*$/, '')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

function toSections(blocks: Block[]): Section[] {
  const sections: Section[] = [];
  const stack: Array<{ level: number; title: string }> = [];
  let current: Section = { headingPath: [], headings: [], blocks: [] };
  for (const block of blocks) {
    if (block.kind !== 'heading') {
      current.blocks.push(block);
      continue;
    }
    const level = block.level!;
    // An empty section whose heading is followed by a deeper one travels with its first subsection.
    const carry = current.blocks.length === 0 && current.headings.length > 0 && level > (stack[stack.length - 1]?.level ?? 0);
    if (!carry && (current.blocks.length > 0 || current.headings.length > 0)) sections.push(current);
    while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, title: block.title ?? '' });
    current = {
      headingPath: stack.map((h) => h.title).filter(Boolean),
      headings: carry ? [...current.headings, block.text] : [block.text],
      blocks: [],
    };
  }
  if (current.blocks.length > 0 || current.headings.length > 0) sections.push(current);
  return sections;
}

// ---- packing ------------------------------------------------------------------------------------

function chunkSection(section: Section, target: number, max: number): string[] {
  const out: string[] = [];
  let current = section.headings.join('\n\n');
  const flush = () => {
    if (current.trim()) out.push(current);
    current = '';
  };
  for (const block of section.blocks) {
    const pieces = block.text.length > max ? splitBlock(block, target, max) : [block.text];
    for (const piece of pieces) {
      if (!current) {
        current = piece;
        continue;
      }
      const joined = current.length + 2 + piece.length;
      if (joined <= target || (joined <= max && current.length < target / 2)) {
        current = `${current}\n\n${piece}`;
      } else {
        flush();
        current = piece;
      }
    }
  }
  flush();
  return out;
}

function splitBlock(block: Block, target: number, max: number): string[] {
  switch (block.kind) {
    case 'table':
      return splitTable(block.text, target, max);
    case 'code':
      return splitCode(block.text, target, max);
    case 'list':
      return pack(listItems(block.text), '\n', target, max, (item) => splitProse(item, target, max, 1));
    default:
      return splitProse(block.text, target, max, 1);
  }
}

/**
 * Greedy packing of segments joined by `separator`: append while the chunk stays within the target
 * (or within the soft maximum while it is still under half the target); a segment bigger than the
 * soft maximum is split with `oversize` first.
 */
function pack(segments: string[], separator: string, target: number, max: number, oversize: (s: string) => string[]): string[] {
  const out: string[] = [];
  let current = '';
  for (const segment of segments) {
    const parts = segment.length > max ? oversize(segment) : [segment];
    for (const part of parts) {
      if (!current) {
        current = part;
        continue;
      }
      const joined = current.length + separator.length + part.length;
      if (joined <= target || (joined <= max && current.length < target / 2)) {
        current += separator + part;
      } else {
        out.push(current);
        current = part;
      }
    }
  }
  if (current) out.push(current);
  return out;
}

function splitTable(text: string, target: number, max: number): string[] {
  const lines = text.split('\n');
  const header = `${lines[0]}\n${lines[1]}`;
  const rows = lines.slice(2);
  const budget = Math.max(Math.floor(target / 4), target - header.length - 1);
  const budgetMax = Math.max(budget, max - header.length - 1);
  const groups = pack(rows, '\n', budget, budgetMax, (row) => [row]);
  return groups.map((group) => `${header}\n${group}`).flatMap((chunk) => {
    // A single row too big even for a chunk of its own is split as prose (its cells stay in order).
    if (chunk.length <= max * 2) return [chunk];
    const row = chunk.slice(header.length + 1);
    return splitProse(row, target, max, 3);
  });
}

function splitCode(text: string, target: number, max: number): string[] {
  const lines = text.split('\n');
  const open = lines[0]!;
  const marker = FENCE.exec(open)?.[1] ?? '```';
  const last = lines[lines.length - 1]!;
  const closed = lines.length > 1 && last.trim() === marker;
  const body = lines.slice(1, closed ? -1 : undefined);
  const overhead = open.length + marker.length + 2;
  const budget = Math.max(Math.floor(target / 4), target - overhead);
  const budgetMax = Math.max(budget, max - overhead);
  return pack(body, '\n', budget, budgetMax, (line) => splitProse(line, budget, budgetMax, 3)).map((group) => `${open}\n${group}\n${marker}`);
}

/** Top-level items of a list block (each with its continuation and nested lines). */
function listItems(text: string): string[] {
  const lines = text.split('\n');
  const indent = LIST_ITEM.exec(lines[0]!)?.[1]?.length ?? 0;
  const items: string[] = [];
  let current: string[] = [];
  for (const line of lines) {
    const m = LIST_ITEM.exec(line);
    if (m && m[1]!.length <= indent && current.length > 0) {
      items.push(current.join('\n').replace(/\n+$/, ''));
      current = [];
    }
    current.push(line);
  }
  if (current.length > 0) items.push(current.join('\n').replace(/\n+$/, ''));
  return items.filter((item) => item.trim() !== '');
}

/**
 * Splits prose by ever finer boundaries, starting at `level`: 0 blank lines, 1 line breaks,
 * 2 sentence ends, 3 whitespace, 4 code points (for "words" longer than the soft maximum).
 */
function splitProse(text: string, target: number, max: number, level: number): string[] {
  if (text.length <= max) return [text];
  if (level >= 4) return hardCut(text, target);
  const segments = segmentsAt(text, level);
  if (segments.length <= 1) return splitProse(text, target, max, level + 1);
  return pack(segments, '', target, max, (s) => splitProse(s, target, max, level + 1)).map((s) => s.trim()).filter(Boolean);
}

const SENTENCE_END = /(?<=[.!?…](?:["'”’)\]]*))\s+(?=\S)|(?<=[。！？])/g;

/** Cuts text after each boundary of the given level; the pieces concatenate back to the text. */
function segmentsAt(text: string, level: number): string[] {
  const pattern = level === 0 ? /\n[ \t]*\n\s*/g : level === 1 ? /\n/g : level === 2 ? SENTENCE_END : /\s+/g;
  const out: string[] = [];
  let start = 0;
  for (const m of text.matchAll(pattern)) {
    const end = m.index + m[0].length;
    if (end <= start || end >= text.length) continue;
    out.push(text.slice(start, end));
    start = end;
  }
  out.push(text.slice(start));
  return out.filter((s) => s !== '');
}

function hardCut(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    // Never split a surrogate pair.
    if (end < text.length && /[\uDC00-\uDFFF]/.test(text[end]!)) end--;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}
