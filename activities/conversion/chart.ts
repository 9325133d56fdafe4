import { renderTable, squeeze } from './markdown.js';
import { child, descendants, firstDescendant, path, rootElement, textContent, attr, type XNode } from './xml.js';

/**
 * A DrawingML chart part (`c:chartSpace`) → its title and its cached data as a Markdown table
 * (categories down, one column per series). Only the values cached in the chart are used; linked
 * workbooks are never opened.
 */
export function chartToMarkdown(doc: XNode | undefined): string {
  const chart = path(rootElement(doc ?? { name: '', qname: '', attrs: {}, children: [] }), 'chart');
  if (!chart) return '';
  const title = squeeze(textContent(child(chart, 'title')));
  const plotArea = child(chart, 'plotArea');
  const series = descendants(plotArea, 'ser');

  const categories = new Map<number, string>();
  const columns: Array<{ name: string; values: Map<number, string> }> = [];
  for (const [i, ser] of series.entries()) {
    const name = squeeze(textContent(firstDescendant(child(ser, 'tx'), 'v') ?? child(ser, 'tx'))) || `Series ${i + 1}`;
    for (const [idx, value] of points(child(ser, 'cat') ?? child(ser, 'xVal'))) if (!categories.has(idx)) categories.set(idx, value);
    columns.push({ name, values: points(child(ser, 'val') ?? child(ser, 'yVal')) });
  }
  const indexes = [...new Set([...categories.keys(), ...columns.flatMap((c) => [...c.values.keys()])])].sort((a, b) => a - b);
  const parts: string[] = [];
  parts.push(title ? `**Chart: ${title}**` : '**Chart**');
  if (indexes.length > 0 && columns.length > 0) {
    const rows = [[categories.size > 0 ? 'Category' : '#', ...columns.map((c) => c.name)]];
    for (const idx of indexes) rows.push([categories.get(idx) ?? String(idx + 1), ...columns.map((c) => formatNumber(c.values.get(idx) ?? ''))]);
    parts.push(renderTable(rows, { dropEmptyColumns: false }));
  }
  return title || indexes.length > 0 ? parts.join('\n\n') : '';
}

/** Cached points of a category or value reference: index → text. Multi-level categories are joined. */
function points(node: XNode | undefined): Map<number, string> {
  const out = new Map<number, string>();
  if (!node) return out;
  for (const pt of descendants(node, 'pt')) {
    const idx = Number.parseInt(attr(pt, 'idx') ?? '', 10);
    if (!Number.isFinite(idx)) continue;
    const value = squeeze(textContent(child(pt, 'v')));
    out.set(idx, out.has(idx) ? `${value} ${out.get(idx)}` : value);
  }
  return out;
}

function formatNumber(value: string): string {
  if (!/^-?\d+(\.\d+)?(E[-+]?\d+)?$/i.test(value)) return value;
  const n = Number(value);
  return Number.isFinite(n) ? String(Number(n.toPrecision(15))) : value;
}
