import { zipSync, type Zippable } from 'fflate';
import mammoth from 'mammoth';
import type { ConversionContext } from './context.js';
import { ConversionError, describeError } from './errors.js';
import { htmlToMarkdown } from './html.js';
import { escapeXml } from './xml.js';
import { hasText } from './markdown.js';
import { OoxmlPackage, type Relationship } from './ooxml.js';
import { extractEquations, restoreEquations } from './omml.js';
import type { ConversionResult } from './convert.js';

/**
 * DOCX → Markdown: mammoth (semantic HTML: headings from paragraph styles, lists, tables, comments)
 * → turndown with the project's table rule. Before mammoth sees the document it is rebuilt from the
 * parts we already inflated under the size limits, with
 * - every non-hyperlink external relationship removed (linked images, templates, OLE links, ...), and
 *   mammoth's own external file access off as a second wall;
 * - equations (OMML, which mammoth drops) replaced by LaTeX placeholders;
 * - binary parts (images, embeddings, fonts) left out: only alt text is used.
 */

const STYLE_MAP = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => h2:fresh",
  'comment-reference => sup',
];

export async function convertDocx(bytes: Uint8Array, ctx: ConversionContext): Promise<ConversionResult> {
  const pkg = OoxmlPackage.open(bytes, ctx, 'Word document');
  const main = pkg.mainPart('word/document.xml');
  const external = pkg.externalReferences();

  const files: Zippable = {};
  let equations: string[] = [];
  for (const name of pkg.zip.names()) {
    ctx.check();
    if (!isTextPart(name)) continue;
    let text = pkg.zip.readText(name) ?? '';
    if (/<!ENTITY/i.test(text)) {
      throw new ConversionError('unsafe', `This Word document was refused: part ${name} declares XML entities.`);
    }
    const removed = external.get(name);
    if (removed) text = withoutRelationships(pkg.rels(ownerOf(name)), removed);
    if (name === main) {
      const extracted = extractEquations(text);
      text = extracted.xml;
      equations = extracted.equations;
    }
    files[name] = [new TextEncoder().encode(text), { level: 0 }];
  }
  const rebuilt = zipSync(files);
  ctx.check();

  let html: string;
  try {
    const result = await ctx.bound(
      mammoth.convertToHtml(
        { buffer: Buffer.from(rebuilt.buffer, rebuilt.byteOffset, rebuilt.byteLength) },
        {
          styleMap: STYLE_MAP,
          externalFileAccess: false,
          ignoreEmptyParagraphs: true,
          convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
        },
      ),
    );
    html = result.value;
  } catch (err) {
    if (err instanceof ConversionError) throw err;
    throw new ConversionError('corrupt', `This Word document could not be read: ${describeError(err)}.`, { cause: err });
  }
  ctx.check();
  const converted = htmlToMarkdown(html);
  const markdown = restoreEquations(converted.markdown, equations);
  if (!hasText(markdown)) throw new ConversionError('empty', 'This Word document has no text to index.');
  return { markdown, title: pkg.coreTitle(), warnings: ctx.warnings };
}

/** XML parts mammoth may read; media, fonts and embedded objects are not needed for text. */
function isTextPart(name: string): boolean {
  return /\.(xml|rels)$/i.test(name) && !/^(word\/)?(embeddings|media|fonts)\//i.test(name);
}

function ownerOf(relsName: string): string {
  if (relsName === '_rels/.rels') return '';
  return relsName.replace(/(^|\/)_rels\/([^/]+)\.rels$/, '$1$2');
}

/**
 * Rewrites a .rels part so the given relationships point nowhere. The ids stay (mammoth expects every
 * referenced id to exist) but their targets become an inert placeholder that is never read.
 */
function withoutRelationships(all: Relationship[], removed: Relationship[]): string {
  const drop = new Set(removed.map((r) => r.id));
  const items = all.map((r) => {
    const target = drop.has(r.id) ? REMOVED_TARGET : r.target;
    return `<Relationship Id="${escapeXml(r.id)}" Type="${escapeXml(r.type)}" Target="${escapeXml(target)}"${r.external ? ' TargetMode="External"' : ''}/>`;
  });
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${items.join('')}</Relationships>`;
}

const REMOVED_TARGET = 'external-reference-removed';
