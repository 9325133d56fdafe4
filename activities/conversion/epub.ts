import { decodeText } from './charset.js';
import type { ConversionContext } from './context.js';
import type { ConversionResult } from './convert.js';
import { ConversionError } from './errors.js';
import { htmlToMarkdown } from './html.js';
import { hasText, normalizeMarkdown, squeeze } from './markdown.js';
import { resolvePart } from './ooxml.js';
import { attr, child, children, descendants, parseXml, rootElement, textContent, type XNode } from './xml.js';
import { looksLikeZip, ZipArchive } from './zip.js';

/**
 * EPUB 2/3 → Markdown: the package document (OPF) named by META-INF/container.xml gives the spine;
 * each spine item (XHTML) is converted with the HTML rules, in reading order. The navigation document
 * is skipped (it repeats the headings). A short metadata block (title, authors, publisher,
 * description) comes first. DRM-encrypted content fails as `encrypted`; obfuscated fonts are fine.
 */

export async function convertEpub(bytes: Uint8Array, ctx: ConversionContext): Promise<ConversionResult> {
  if (!looksLikeZip(bytes)) throw new ConversionError('corrupt', 'This EPUB is damaged: it is not a ZIP package.');
  const zip = ZipArchive.open(bytes, ctx, 'EPUB');
  const container = xmlPart(zip, 'META-INF/container.xml');
  const opfPath = attr(descendants(container, 'rootfile')[0], 'full-path');
  const opfPart = opfPath ? zip.resolve(opfPath) : zip.names().find((n) => n.toLowerCase().endsWith('.opf'));
  if (!opfPart) throw new ConversionError('corrupt', 'This EPUB is damaged: its package document (OPF) is missing.');
  const opf = rootElement(xmlPart(zip, opfPart) ?? emptyDoc());
  const metadata = child(opf, 'metadata');

  const manifest = new Map<string, { href: string; type: string; properties: string }>();
  for (const item of children(child(opf, 'manifest'), 'item')) {
    const id = attr(item, 'id');
    const href = attr(item, 'href');
    if (id && href) manifest.set(id, { href, type: attr(item, 'media-type') ?? '', properties: attr(item, 'properties') ?? '' });
  }
  const encrypted = encryptedParts(zip);

  const sections: string[] = [];
  const header = metadataBlock(metadata);
  if (header) sections.push(header);
  for (const ref of children(child(opf, 'spine'), 'itemref')) {
    await ctx.checkpoint();
    const item = manifest.get(attr(ref, 'idref') ?? '');
    if (!item || /\bnav\b/.test(item.properties)) continue;
    if (item.type && !/x?html|xml/i.test(item.type)) continue;
    const part = resolvePart(opfPart, item.href);
    const name = part ? zip.resolve(part) : undefined;
    if (!name) continue;
    if (encrypted.has(name)) {
      throw new ConversionError('encrypted', 'This EPUB is DRM-protected (its chapters are encrypted) and cannot be read.');
    }
    const data = zip.read(name);
    if (!data) continue;
    const html = xhtmlAsHtml(decodeText(data, item.type || undefined));
    const { markdown } = htmlToMarkdown(html);
    if (markdown) sections.push(markdown);
  }
  const markdown = normalizeMarkdown(sections.join('\n\n'));
  const body = sections.slice(header ? 1 : 0).join('\n');
  if (!hasText(body)) throw new ConversionError('empty', 'This EPUB has no readable text (its spine is empty or has no text).');
  const title = squeeze(textContent(child(metadata, 'title'))) || undefined;
  return { markdown, title, warnings: ctx.warnings };
}

function xmlPart(zip: ZipArchive, name: string): XNode | undefined {
  const text = zip.readText(name);
  return text === undefined ? undefined : parseXml(text, `EPUB part ${name}`);
}

function metadataBlock(metadata: XNode | undefined): string {
  const values = (name: string) =>
    children(metadata, name)
      .map((n) => squeeze(textContent(n)))
      .filter(Boolean);
  const lines: string[] = [];
  const title = values('title')[0];
  const authors = values('creator');
  const publisher = values('publisher')[0];
  const description = values('description')[0];
  if (title) lines.push(`**Title:** ${title}`);
  if (authors.length > 0) lines.push(`**Authors:** ${authors.join(', ')}`);
  if (publisher) lines.push(`**Publisher:** ${publisher}`);
  if (description) lines.push(`**Description:** ${squeeze(htmlToMarkdown(description).markdown.replace(/\n+/g, ' '))}`);
  return lines.join('\n\n');
}

/** Parts listed in META-INF/encryption.xml, except obfuscated fonts (which are not content). */
function encryptedParts(zip: ZipArchive): Set<string> {
  const out = new Set<string>();
  const doc = zip.has('META-INF/encryption.xml') ? xmlPart(zip, 'META-INF/encryption.xml') : undefined;
  for (const data of descendants(doc, 'EncryptedData')) {
    const algorithm = attr(descendants(data, 'EncryptionMethod')[0], 'Algorithm') ?? '';
    if (/obfuscation|idpf\.org\/2008\/embedding|ns\.adobe\.com\/pdf\/enc#RC/i.test(algorithm)) continue;
    const uri = attr(descendants(data, 'CipherReference')[0], 'URI');
    const name = uri ? zip.resolve(resolvePart('', uri) ?? '') : undefined;
    if (name) out.add(name);
  }
  return out;
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/** XHTML read by an HTML parser: expand self-closing non-void elements (`<a id="x"/>` → `<a id="x"></a>`). */
function xhtmlAsHtml(xhtml: string): string {
  return xhtml
    .replace(/^\s*<\?xml[^>]*>/, '')
    .replace(/<([A-Za-z][\w:-]*)(\s[^<>]*?)?\/>/g, (m, tag: string, attrs: string | undefined) =>
      VOID.has(tag.toLowerCase()) ? m : `<${tag}${attrs ?? ''}></${tag}>`,
    );
}

function emptyDoc(): XNode {
  return { name: '#document', qname: '#document', attrs: {}, children: [] };
}
