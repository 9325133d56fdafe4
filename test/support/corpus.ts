import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The real-document corpus (../shared/corpus/documents, used in place, never copied) and the checks
 * of its expectations.json, shared by the converter's tests and the platform's upload tests.
 */

export const CORPUS = path.resolve('..', 'shared', 'corpus', 'documents');
export const EXPECTATIONS = path.join(CORPUS, 'expectations.json');

export interface Expectation {
  file: string;
  outcome: 'ok' | 'fail' | 'optional';
  failKind?: string;
  must?: string[];
  mustNot?: string[];
  mustNotLine?: string[];
  regex?: string[];
  headings?: string[];
  tableCells?: string[];
  listItems?: string[];
  notes?: string[];
  listItemCount?: number;
  headingLevelsRelative?: Array<[string, string]>;
  stripBackslashes?: boolean;
  relaxed?: { must?: string[]; headings?: string[]; listItems?: string[] };
  setup?: { writeFile: string; content: string };
}

export const norm = (text: string) => text.replace(/\s+/g, ' ').trim();
const HEADING = /^\s{0,3}(#{1,6})\s+(.*)$/;
const LIST_ITEM = /^\s*(?:[*+-]|\d{1,9}[.)])\s+/;

/** Failures of one file's expectations, as readable lines (empty when all hold). */
export function check(markdown: string, e: Expectation): string[] {
  const problems: string[] = [];
  const md = e.stripBackslashes ? markdown.replace(/\\/g, '') : markdown;
  const text = norm(md);
  const lines = md.split('\n');
  const headingLines = lines.filter((l) => HEADING.test(l)).map(norm);
  const tableLines = lines.filter((l) => l.trimStart().startsWith('|')).map(norm);
  const listLines = lines.filter((l) => LIST_ITEM.test(l)).map(norm);
  const must = e.relaxed?.must ?? e.must ?? [];
  const headings = e.relaxed?.headings ?? e.headings ?? [];
  const listItems = e.relaxed?.listItems ?? e.listItems ?? [];

  for (const s of must) if (!text.includes(norm(s))) problems.push(`missing text: ${JSON.stringify(s)}`);
  for (const s of e.mustNot ?? []) if (md.includes(s) || text.includes(norm(s))) problems.push(`forbidden text present: ${JSON.stringify(s)}`);
  for (const s of e.mustNotLine ?? []) if (lines.some((l) => l.trim() === s)) problems.push(`forbidden line present: ${JSON.stringify(s)}`);
  for (const r of e.regex ?? []) if (!new RegExp(r).test(md)) problems.push(`no match for /${r}/`);
  for (const s of headings) if (!headingLines.some((l) => l.includes(norm(s)))) problems.push(`not on a heading line: ${JSON.stringify(s)}`);
  for (const s of e.tableCells ?? []) if (!tableLines.some((l) => l.includes(norm(s)))) problems.push(`not in a table row: ${JSON.stringify(s)}`);
  for (const s of listItems) if (!listLines.some((l) => l.includes(norm(s)))) problems.push(`not on a list item line: ${JSON.stringify(s)}`);
  if (e.listItemCount !== undefined && listLines.length < e.listItemCount) {
    problems.push(`expected at least ${e.listItemCount} list items, found ${listLines.length}`);
  }
  for (const note of e.notes ?? []) {
    const at = md.indexOf(note);
    const notesHeading = md.lastIndexOf('Notes:', at);
    const slideHeading = md.lastIndexOf('\n## ', at);
    if (at < 0 || notesHeading < 0 || notesHeading < slideHeading) problems.push(`not under a Notes: block: ${JSON.stringify(note)}`);
  }
  for (const [upper, lower] of e.headingLevelsRelative ?? []) {
    const level = (title: string) => {
      const line = lines.find((l) => HEADING.exec(l)?.[2]?.trim() === title);
      return line ? HEADING.exec(line)![1]!.length : undefined;
    };
    const a = level(upper);
    const b = level(lower);
    if (a === undefined || b === undefined || a >= b) problems.push(`heading ${JSON.stringify(upper)} (level ${a}) should be above ${JSON.stringify(lower)} (level ${b})`);
  }
  return problems;
}


/** The corpus's expectations, or undefined when ../shared is not beside the checkout. */
export function loadCorpus(): Expectation[] | undefined {
  if (!fs.existsSync(EXPECTATIONS)) return undefined;
  return (JSON.parse(fs.readFileSync(EXPECTATIONS, 'utf8')) as { files: Expectation[] }).files;
}

/**
 * Writes the file a vulnerable converter would leak (CVE-2025-11849) where the expectation says, so the
 * test can check it does not reach the output; answers the path to remove afterwards.
 */
export function writeCanary(e: Expectation): string | undefined {
  if (!e.setup) return undefined;
  const target = path.resolve(e.setup.writeFile);
  if (path.dirname(target) !== os.tmpdir() && !target.startsWith('/tmp/')) return undefined;
  fs.writeFileSync(target, e.setup.content);
  return target;
}
