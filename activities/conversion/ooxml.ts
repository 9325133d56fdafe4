import type { ConversionContext } from './context.js';
import { cfbFailure, isCfb } from './detect.js';
import { ConversionError } from './errors.js';
import { attr, children, parseXml, rootElement, textContent, firstDescendant, type XNode } from './xml.js';
import { looksLikeZip, ZipArchive } from './zip.js';

/**
 * Open Packaging Conventions (docx, pptx, xlsx): relationships, part resolution and the external-link
 * policy.
 *
 * External relationships (`TargetMode="External"`) are never followed. Hyperlinks stay (they are only
 * text in the output). Every other external relationship — linked images (`r:link`), attached
 * templates, linked OLE objects, external workbook links, subdocuments, frames, ... (the CVE-2025-11849
 * class of tricks) — is ignored: it is left out of the conversion and named in the result's warnings.
 * A package whose main document part itself is external is refused.
 */

export interface Relationship {
  id: string;
  type: string;
  /** Target as written. */
  target: string;
  external: boolean;
  /** For internal targets: the zip entry name the target resolves to. */
  part?: string;
}

export class OoxmlPackage {
  private relsCache = new Map<string, Relationship[]>();

  private constructor(
    readonly zip: ZipArchive,
    readonly ctx: ConversionContext,
    readonly label: string,
  ) {}

  /** Opens the package; encrypted Office files (an OLE wrapper) and non-zips fail clearly. */
  static open(bytes: Uint8Array, ctx: ConversionContext, label: string): OoxmlPackage {
    if (isCfb(bytes)) throw cfbFailure(bytes);
    if (!looksLikeZip(bytes)) throw new ConversionError('corrupt', `This ${label} is damaged: it is not a ZIP package.`);
    return new OoxmlPackage(ZipArchive.open(bytes, ctx, label), ctx, label);
  }

  /** Parses an XML part, or undefined when the part is absent. */
  xml(part: string): XNode | undefined {
    const text = this.zip.readText(part);
    return text === undefined ? undefined : parseXml(text, `${this.label} part ${part}`);
  }

  /** Relationships of a part (`''` for the package relationships). */
  rels(part: string): Relationship[] {
    const cached = this.relsCache.get(part);
    if (cached) return cached;
    const slash = part.lastIndexOf('/');
    const relsPart = `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
    const doc = this.xml(relsPart);
    const rels: Relationship[] = [];
    for (const rel of children(rootElement(doc ?? emptyDoc()), 'Relationship')) {
      const id = attr(rel, 'Id') ?? '';
      const type = attr(rel, 'Type') ?? '';
      const target = attr(rel, 'Target') ?? '';
      const external = (attr(rel, 'TargetMode') ?? '').toLowerCase() === 'external';
      rels.push({ id, type, target, external, part: external ? undefined : resolvePart(part, target) });
    }
    this.relsCache.set(part, rels);
    return rels;
  }

  /** The internal part a relationship id points to, from `part`. External targets are never returned. */
  target(part: string, id: string | undefined): string | undefined {
    if (!id) return undefined;
    const rel = this.rels(part).find((r) => r.id === id);
    if (!rel || rel.external || !rel.part) return undefined;
    return this.zip.resolve(rel.part);
  }

  /** Internal targets of the relationships of `part` whose type ends with `/${kind}`. */
  targetsOfType(part: string, kind: string): string[] {
    return this.rels(part)
      .filter((r) => !r.external && r.part && typeEnds(r.type, kind))
      .map((r) => this.zip.resolve(r.part!))
      .filter((p): p is string => p !== undefined);
  }

  /** The main document part (`officeDocument` relationship), refusing one that lives outside the file. */
  mainPart(fallback: string): string {
    const rel = this.rels('').find((r) => typeEnds(r.type, 'officeDocument'));
    if (rel?.external) {
      throw new ConversionError('unsafe', `This ${this.label} was refused: its main content points to an external location (${shorten(rel.target)}), which is never fetched.`);
    }
    const part = rel?.part ? this.zip.resolve(rel.part) : undefined;
    const found = part ?? this.zip.resolve(fallback);
    if (!found) throw new ConversionError('corrupt', `This ${this.label} is damaged: its main document part is missing.`);
    return found;
  }

  /**
   * Every external relationship in the package that is not a hyperlink, recorded as a warning.
   * Returns them grouped by the .rels part that declares them.
   */
  externalReferences(): Map<string, Relationship[]> {
    const found = new Map<string, Relationship[]>();
    for (const name of this.zip.names()) {
      if (!name.endsWith('.rels')) continue;
      const owner = name.replace(/(^|\/)_rels\/([^/]+)\.rels$/, '$1$2');
      const rels = this.rels(owner === '.rels' || name === '_rels/.rels' ? '' : owner).filter((r) => r.external && !typeEnds(r.type, 'hyperlink'));
      if (rels.length > 0) found.set(name, rels);
    }
    const all = [...found.values()].flat();
    if (all.length > 0) {
      const kinds = [...new Set(all.map((r) => describeRelType(r.type)))].join(', ');
      const targets = [...new Set(all.map((r) => shorten(r.target)))].slice(0, 3).join(', ');
      this.ctx.warn(
        `Ignored ${all.length} external reference${all.length === 1 ? '' : 's'} (${kinds}: ${targets}${all.length > 3 ? ', ...' : ''}); external content is never fetched.`,
      );
    }
    return found;
  }

  /** `dc:title` from docProps/core.xml. */
  coreTitle(): string | undefined {
    const part = this.targetsOfType('', 'core-properties')[0] ?? this.zip.resolve('docProps/core.xml');
    if (!part) return undefined;
    const title = textContent(firstDescendant(this.xml(part), 'title')).replace(/\s+/g, ' ').trim();
    return title || undefined;
  }
}

function emptyDoc(): XNode {
  return { name: '#document', qname: '#document', attrs: {}, children: [] };
}

export function typeEnds(type: string, kind: string): boolean {
  return type.toLowerCase().endsWith(`/${kind.toLowerCase()}`);
}

/** Resolves a relationship target against the part that declares it, to a zip entry name. */
export function resolvePart(sourcePart: string, target: string): string | undefined {
  let t = target.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(t)) return undefined; // a URI with a scheme is not a part
  t = t.split('#')[0]!;
  try {
    t = decodeURIComponent(t);
  } catch {
    /* keep as written */
  }
  t = t.replace(/\\/g, '/');
  const base = t.startsWith('/') ? [] : sourcePart.split('/').slice(0, -1);
  const segments = [...base];
  for (const seg of t.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (segments.length === 0) return undefined; // escapes the package
      segments.pop();
    } else segments.push(seg);
  }
  return segments.join('/');
}

const REL_KIND_NAMES: Record<string, string> = {
  image: 'linked image',
  attachedtemplate: 'attached template',
  oleobject: 'linked OLE object',
  package: 'linked package',
  subdocument: 'subdocument',
  frame: 'frame',
  externallinkpath: 'external workbook link',
  externallink: 'external workbook link',
  video: 'linked video',
  audio: 'linked audio',
  media: 'linked media',
};

function describeRelType(type: string): string {
  const kind = type.split('/').pop()?.toLowerCase() ?? '';
  return REL_KIND_NAMES[kind] ?? (kind || 'unknown');
}

export function shorten(text: string, max = 80): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}
