import { XMLParser } from 'fast-xml-parser';
import { ConversionError } from './errors.js';

/**
 * A small element tree over fast-xml-parser's ordered output. Element names are matched by local
 * name (prefix dropped) so Transitional and Strict OOXML, and writers with unusual prefixes, read the
 * same. Attributes keep their qualified names (`r:id` and `id` are different attributes).
 */
export interface XNode {
  /** Local name (`t` for `a:t`); `#text` for text nodes. */
  name: string;
  /** Qualified name as written (`a:t`). */
  qname: string;
  attrs: Record<string, string>;
  children: XNode[];
  /** Text content of a `#text` node. */
  text?: string;
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  allowBooleanAttributes: true,
});

type Ordered = Record<string, unknown>;

/** Parses XML into an {@link XNode} tree rooted at a synthetic `#document` node. */
export function parseXml(xml: string, what: string): XNode {
  if (/<!ENTITY/i.test(xml)) {
    throw new ConversionError('unsafe', `The ${what} declares XML entities, which are not allowed here; the file was refused.`);
  }
  let parsed: unknown;
  try {
    parsed = parser.parse(xml);
  } catch (err) {
    throw new ConversionError('corrupt', `The ${what} is not well-formed XML and cannot be read.`, { cause: err });
  }
  const root: XNode = { name: '#document', qname: '#document', attrs: {}, children: [] };
  // Iterative conversion: hostile documents may nest deeper than the call stack allows.
  const stack: Array<[Ordered[], XNode]> = [[Array.isArray(parsed) ? (parsed as Ordered[]) : [], root]];
  while (stack.length > 0) {
    const [items, parent] = stack.pop()!;
    for (const item of items) {
      for (const key of Object.keys(item)) {
        if (key === ':@') continue;
        const value = item[key];
        if (key === '#text') {
          parent.children.push({ name: '#text', qname: '#text', attrs: {}, children: [], text: String(value) });
          continue;
        }
        const colon = key.indexOf(':');
        const node: XNode = {
          name: colon >= 0 ? key.slice(colon + 1) : key,
          qname: key,
          attrs: (item[':@'] as Record<string, string> | undefined) ?? {},
          children: [],
        };
        parent.children.push(node);
        if (Array.isArray(value) && value.length > 0) stack.push([value as Ordered[], node]);
      }
    }
  }
  return root;
}

/** First child element with this local name. */
export function child(node: XNode | undefined, name: string): XNode | undefined {
  if (!node) return undefined;
  for (const c of node.children) if (c.name === name) return c;
  return undefined;
}

/** Child elements with this local name (all child elements when name is omitted). */
export function children(node: XNode | undefined, name?: string): XNode[] {
  if (!node) return [];
  return node.children.filter((c) => c.name !== '#text' && (name === undefined || c.name === name));
}

/** Follows a path of local names through first children: `path(root, 'workbook', 'sheets')`. */
export function path(node: XNode | undefined, ...names: string[]): XNode | undefined {
  let current = node;
  for (const name of names) current = child(current, name);
  return current;
}

/** All descendant elements with this local name, in document order. */
export function descendants(node: XNode | undefined, name: string): XNode[] {
  const out: XNode[] = [];
  if (!node) return out;
  const stack: XNode[] = [...node.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.name === name) out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/** First descendant element with this local name. */
export function firstDescendant(node: XNode | undefined, name: string): XNode | undefined {
  if (!node) return undefined;
  const stack: XNode[] = [...node.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.name === name) return n;
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return undefined;
}

/** An unprefixed attribute (`id`), or a prefixed one by local name when `prefixed` (`r:id`, whatever the prefix). */
export function attr(node: XNode | undefined, name: string, prefixed = false): string | undefined {
  if (!node) return undefined;
  if (!prefixed) return node.attrs[name];
  for (const key of Object.keys(node.attrs)) {
    const colon = key.indexOf(':');
    if (colon > 0 && key.slice(colon + 1) === name && key.slice(0, colon) !== 'xmlns') return node.attrs[key];
  }
  return undefined;
}

/** Attribute by local name with or without a prefix (`val`, `w:val`, `office:value-type`). */
export function anyAttr(node: XNode | undefined, name: string): string | undefined {
  return attr(node, name) ?? attr(node, name, true);
}

/** Concatenated text of all descendant text nodes. */
export function textContent(node: XNode | undefined): string {
  if (!node) return '';
  if (node.name === '#text') return node.text ?? '';
  let out = '';
  const stack: XNode[] = [...node.children].reverse();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.name === '#text') out += n.text ?? '';
    else for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/** The root element of a parsed document. */
export function rootElement(doc: XNode): XNode | undefined {
  return doc.children.find((c) => c.name !== '#text');
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}
