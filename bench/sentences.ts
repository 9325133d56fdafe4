import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Real English prose for the knowledge benchmarks, written by people rather than generated: sentences
 * from the README.md files of the installed npm packages (node_modules, one level and scoped packages)
 * and from this project's docs/. Only paragraph text is read (headings, lists, tables, quotes, HTML and
 * code blocks are skipped); images are dropped and links keep their text; it is split into sentences
 * of 40–300 characters, and a sentence is kept when it starts with a capital, ends with . ! or ?, is
 * mostly letters, and has no code, URL or markup left in it. Duplicates (ignoring case) are dropped.
 * The set and its order depend only on the installed packages (paths are read in sorted order), and
 * `shuffled` reorders it with a seeded generator, so a run is repeatable on one install (~3500
 * sentences here).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIN_CHARS = 40;
const MAX_CHARS = 300;

let cache: string[] | undefined;

/** Every distinct sentence found, in file order. */
export function realSentences(): string[] {
  if (cache) return cache;
  const seen = new Set<string>();
  const out: string[] = [];
  for (const file of sourceFiles()) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const sentence of sentencesOf(text)) {
      const key = sentence.toLowerCase();
      if (!seen.has(key)) {
        seen.add(key);
        out.push(sentence);
      }
    }
  }
  cache = out;
  return out;
}

/** `count` distinct sentences in a seeded random order; throws when there are not that many. */
export function sampleSentences(count: number, seed: number): string[] {
  const all = realSentences();
  if (all.length < count) throw new Error(`only ${all.length} distinct sentences found in node_modules READMEs and docs/, ${count} wanted`);
  return shuffled(all, seed).slice(0, count);
}

/** A copy of `items` in a Fisher–Yates order drawn from `seed`. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** mulberry32: a small, fast, seeded generator of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sourceFiles(): string[] {
  const files: string[] = [];
  const docs = path.join(ROOT, 'docs');
  if (fs.existsSync(docs)) {
    for (const name of fs.readdirSync(docs).sort()) if (name.endsWith('.md')) files.push(path.join(docs, name));
  }
  const modules = path.join(ROOT, 'node_modules');
  const packageDirs: string[] = [];
  for (const name of safeReaddir(modules)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const inner of safeReaddir(path.join(modules, name))) packageDirs.push(path.join(modules, name, inner));
    } else {
      packageDirs.push(path.join(modules, name));
    }
  }
  for (const dir of packageDirs) {
    const readme = safeReaddir(dir).find((name) => name.toLowerCase() === 'readme.md');
    if (readme) files.push(path.join(dir, readme));
  }
  return files;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** Prose sentences of one Markdown file. */
function sentencesOf(markdown: string): string[] {
  const prose: string[] = [];
  let inFence = false;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) prose.push(paragraph.join(' '));
    paragraph = [];
  };
  for (const raw of markdown.replace(/<!--[\s\S]*?-->/g, '').split(/\r?\n/)) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      inFence = !inFence;
      flush();
      continue;
    }
    if (inFence) continue;
    // Paragraph text only: headings, lists, tables, quotes, HTML, indented code and rules end a paragraph.
    if (!line || /^(#|[-*+] |\d+[.)] |\||>|<|[-=*_]{3,})/.test(line) || /^ {4}|\t/.test(raw)) {
      flush();
      continue;
    }
    paragraph.push(line);
  }
  flush();

  const sentences: string[] = [];
  for (const text of prose) {
    const clean = text
      .replace(/!\[[^\]]*\]\([^)]*\)/g, '') // images, badges
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1') // links keep their text
      .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
      .replace(/[*_]{1,3}([^*_]+)[*_]{1,3}/g, '$1')
      .replace(/\s+/g, ' ')
      .trim();
    for (const sentence of clean.split(/(?<=[.!?])\s+(?=[A-Z])/)) {
      const s = sentence.trim();
      if (s.length < MIN_CHARS || s.length > MAX_CHARS) continue;
      if (/[`[\]{}<>|\\]|:\/\//.test(s)) continue; // code, leftover references, markup, URLs
      if (!/^[A-Z]/.test(s) || !/[.!?]$/.test(s)) continue;
      const letters = (s.match(/[A-Za-z ]/g) ?? []).length;
      if (letters / s.length < 0.85) continue;
      sentences.push(s);
    }
  }
  return sentences;
}
