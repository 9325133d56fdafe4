import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { zipSync, type Zippable } from 'fflate';
import iconv from 'iconv-lite';
import {
  ConversionError,
  convertDocument,
  convertToMarkdown,
  convertToMarkdownIsolated,
  decodeText,
  detectCharset,
  detectFormat,
  htmlToMarkdown,
  isTextFamily,
  type DocumentFormat,
} from '../activities/conversion/index.js';

// ---- helpers --------------------------------------------------------------------------------------

async function rejection(work: Promise<unknown>): Promise<ConversionError> {
  try {
    await work;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(ConversionError);
    return err as ConversionError;
  }
  throw new Error('expected the conversion to fail');
}

const enc = (text: string) => new TextEncoder().encode(text);

function zip(files: Record<string, string | Uint8Array>, level: 0 | 1 | 6 | 9 = 6): Uint8Array {
  const input: Zippable = {};
  for (const [name, data] of Object.entries(files)) input[name] = [typeof data === 'string' ? enc(data) : data, { level }];
  return zipSync(input);
}

/** Rewrites the uncompressed size the central directory declares for entries over 1 MB (a lying archive). */
function patchDeclaredSizes(bytes: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  for (let i = 0; i + 46 <= out.length; i++) {
    if (view.getUint32(i, true) === 0x02014b50 && view.getUint32(i + 24, true) > 1024 * 1024) view.setUint32(i + 24, size, true);
  }
  return out;
}

/** Deterministic pseudo-random bytes. */
function noise(length: number, seed = 42): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const NS = {
  w: 'http://schemas.openxmlformats.org/wordprocessingml/2006/main',
  r: 'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  rels: 'http://schemas.openxmlformats.org/package/2006/relationships',
  types: 'http://schemas.openxmlformats.org/package/2006/content-types',
  ssml: 'http://schemas.openxmlformats.org/spreadsheetml/2006/main',
};
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

function docx(body: string, options: { documentRels?: string; packageRels?: string; extra?: Record<string, string> } = {}): Uint8Array {
  return zip({
    '[Content_Types].xml': `<?xml version="1.0"?><Types xmlns="${NS.types}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
    '_rels/.rels':
      options.packageRels ??
      `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/document.xml': `<?xml version="1.0"?><w:document xmlns:w="${NS.w}" xmlns:r="${NS.r}" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>${body}</w:body></w:document>`,
    'word/_rels/document.xml.rels': options.documentRels ?? `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"></Relationships>`,
    ...options.extra,
  });
}

const para = (text: string, style?: string) =>
  `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

function xlsx(sheets: Array<{ name: string; rows: string }>, sharedStrings?: string[], styles?: string): Uint8Array {
  const files: Record<string, string> = {
    '[Content_Types].xml': `<?xml version="1.0"?><Types xmlns="${NS.types}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
    '_rels/.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<?xml version="1.0"?><workbook xmlns="${NS.ssml}" xmlns:r="${NS.r}"><sheets>${sheets.map((s, i) => `<sheet name="${s.name}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}">${sheets.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('')}${sharedStrings ? `<Relationship Id="rIdS" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/>` : ''}${styles ? `<Relationship Id="rIdT" Type="${REL}/styles" Target="styles.xml"/>` : ''}</Relationships>`,
  };
  sheets.forEach((s, i) => (files[`xl/worksheets/sheet${i + 1}.xml`] = `<?xml version="1.0"?><worksheet xmlns="${NS.ssml}"><sheetData>${s.rows}</sheetData></worksheet>`));
  if (sharedStrings) files['xl/sharedStrings.xml'] = `<?xml version="1.0"?><sst xmlns="${NS.ssml}">${sharedStrings.map((t) => `<si><t>${t}</t></si>`).join('')}</sst>`;
  if (styles) files['xl/styles.xml'] = styles;
  return zip(files);
}

/** A one-page PDF; `text` undefined gives a page without a text layer. */
function pdf(text: string | undefined): Uint8Array {
  const content = text === undefined ? '' : `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

// ---- detection ------------------------------------------------------------------------------------

describe('conversion: format detection', () => {
  const cases: Array<[string, Uint8Array, string | undefined, string | undefined, DocumentFormat]> = [
    ['random bytes', noise(4096), 'blob.bin', undefined, 'unsupported'],
    ['random bytes named .txt', noise(4096), 'notes.txt', 'text/plain', 'unsupported'],
    ['a docx by content, whatever its name', docx(para('x')), 'report.pdf', 'application/pdf', 'docx'],
    ['an xlsx by content', xlsx([{ name: 'S', rows: '' }]), undefined, undefined, 'xlsx'],
    ['a PDF by magic bytes', pdf('Hello'), 'scan', undefined, 'pdf'],
    ['CSV by extension', enc('a,b\n1,2\n'), 'data.csv', undefined, 'csv'],
    ['CSV by content type', enc('a,b\n1,2\n'), undefined, 'text/csv; charset=utf-8', 'csv'],
    ['Markdown by extension', enc('# Title\n\nText'), 'README.md', undefined, 'md'],
    ['JSON by content', enc('{"a": [1, 2]}'), undefined, undefined, 'json'],
    ['HTML by content', enc('<!DOCTYPE html><html><body><p>Hi</p></body></html>'), undefined, undefined, 'html'],
    ['plain text', enc('Just some words.\nAnd more.'), undefined, undefined, 'txt'],
    ['latin-1 text', iconv.encode('Crème brûlée à la française, déjà vu.', 'latin1'), undefined, undefined, 'txt'],
    ['UTF-16 text with BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Hello there', 'utf16le')]), 'a.txt', undefined, 'txt'],
    ['a PNG image', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...noise(64)]), 'photo.png', undefined, 'unsupported'],
    ['a plain zip', zip({ 'a.txt': 'hello' }), 'files.zip', undefined, 'unsupported'],
  ];
  for (const [label, bytes, filename, contentType, format] of cases) {
    it(`${label} → ${format}`, async () => {
      expect(await detectFormat(bytes, filename, contentType)).to.equal(format);
    });
  }

  it('isTextFamily separates text formats from converted ones', () => {
    for (const f of ['txt', 'md', 'csv', 'tsv', 'json', 'html', 'xml', 'yaml']) expect(isTextFamily(f), f).to.equal(true);
    for (const f of ['docx', 'pptx', 'xlsx', 'pdf', 'epub', 'odt', 'unsupported']) expect(isTextFamily(f), f).to.equal(false);
  });

  it('random bytes fail as unsupported with a reason', async () => {
    const err = await rejection(convertDocument(noise(1024), { filename: 'random.bin' }));
    expect(err.kind).to.equal('unsupported');
    expect(err.message).to.match(/not a supported document/);
    const again = await rejection(convertToMarkdown(noise(1024), 'unsupported'));
    expect(again.kind).to.equal('unsupported');
  });

  it('random bytes claimed to be a docx or a PDF fail as damaged, readably', async () => {
    const asDocx = await rejection(convertToMarkdown(noise(2048), 'docx'));
    expect(asDocx.kind).to.equal('corrupt');
    expect(asDocx.message).to.match(/^This Word document is damaged/);
    const asPdf = await rejection(convertToMarkdown(noise(2048), 'pdf'));
    expect(asPdf.kind).to.equal('corrupt');
    expect(asPdf.message).to.match(/PDF/);
  });

  it('an image is refused as unsupported, naming OCR', async () => {
    const png = new Uint8Array(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'));
    const err = await rejection(convertDocument(png, { filename: 'photo.png' }));
    expect(err.kind).to.equal('unsupported');
    expect(err.message).to.match(/OCR/);
  });
});

// ---- text decoding --------------------------------------------------------------------------------

describe('conversion: text decoding', () => {
  const sample = 'Crème brûlée à la française: déjà vu, naïve façade, garçon!';

  it('decodes latin-1 (windows-1252) text', () => {
    const bytes = iconv.encode(sample, 'latin1');
    expect(decodeText(bytes)).to.equal(sample);
    expect(detectCharset(bytes).charset).to.equal('windows-1252');
  });

  it('decodes UTF-16 LE and BE with a BOM, and LE without one', () => {
    const text = `${sample}\nzweite Zeile — Grüße`;
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]);
    expect(decodeText(le)).to.equal(text);
    expect(decodeText(be)).to.equal(text);
    expect(decodeText(iconv.encode(text, 'utf-16le'))).to.equal(text);
  });

  it('turns a lone surrogate in UTF-16 (half an emoji) into U+FFFD, as any invalid sequence', () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('# Notes \uD83D\n\nbody', 'utf16le')]);
    expect(bytes.includes(Buffer.from([0x3d, 0xd8])), 'the lone high surrogate is in the bytes').to.equal(true);
    expect(decodeText(bytes)).to.equal('# Notes \uFFFD\n\nbody');
  });

  it('drops a UTF-8 BOM and normalises newlines', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo\r\nwörld\r', 'utf8')]);
    expect(decodeText(bytes)).to.equal('héllo\nwörld\n');
    expect(detectCharset(bytes)).to.deep.equal({ charset: 'utf-8', source: 'bom' });
  });

  it('honours a declared charset that fits, and ignores one that does not', () => {
    const cyrillic = iconv.encode('Привет, мир! Это тест.', 'windows-1251');
    expect(decodeText(cyrillic, 'text/plain; charset=windows-1251')).to.equal('Привет, мир! Это тест.');
    const utf8 = Buffer.from('Grüße aus Köln', 'utf8');
    expect(decodeText(utf8, 'text/plain; charset=iso-8859-1')).to.equal('Grüße aus Köln', 'valid UTF-8 beats a mislabel');
    const latin = iconv.encode(sample, 'latin1');
    expect(decodeText(latin, 'text/plain; charset=utf-8')).to.equal(sample, 'invalid UTF-8 falls back to detection');
  });

  it('reads an HTML meta charset', () => {
    const html = iconv.encode('<html><head><meta charset="windows-1252"></head><body><p>Café “quoted”</p></body></html>', 'windows-1252');
    expect(decodeText(html)).to.contain('Café “quoted”');
  });

  it('decodes a short Shift_JIS CSV that fools byte statistics', async () => {
    const bytes = iconv.encode('名前,年齢,住所\r\n佐藤太郎,30,東京\r\n髙橋淳,35,名古屋\r\n', 'cp932');
    expect(decodeText(bytes)).to.contain('髙橋淳,35,名古屋');
    const { markdown } = await convertToMarkdown(bytes, 'csv');
    expect(markdown.split('\n').slice(0, 3)).to.deep.equal(['| 名前 | 年齢 | 住所 |', '| --- | --- | --- |', '| 佐藤太郎 | 30 | 東京 |']);
  });

  it('an empty or blank text upload fails as empty', async () => {
    expect((await rejection(convertToMarkdown(enc('  \n\n '), 'txt'))).kind).to.equal('empty');
  });
});

// ---- HTML → Markdown ------------------------------------------------------------------------------

describe('conversion: HTML to Markdown', () => {
  it('a header-less table becomes a pipe table with its first row as the header', () => {
    const { markdown } = htmlToMarkdown('<p>Before</p><table><tr><td>A</td><td>B</td></tr><tr><td>1</td><td>2</td></tr></table><p>After</p>');
    expect(markdown).to.equal('Before\n\n| A | B |\n| --- | --- |\n| 1 | 2 |\n\nAfter');
  });

  it('keeps a <thead> header, aligns colspan/rowspan, escapes pipes and flattens cells', () => {
    const html = `<table><thead><tr><th>Name</th><th>Notes</th><th>Qty</th></tr></thead><tbody>
      <tr><td rowspan="2">Widget</td><td><p>first</p><p>second | third</p></td><td>3</td></tr>
      <tr><td colspan="2"><ul><li>a</li><li>b</li></ul></td></tr></tbody></table>`;
    const { markdown } = htmlToMarkdown(html);
    expect(markdown.split('\n')).to.deep.equal([
      '| Name | Notes | Qty |',
      '| --- | --- | --- |',
      '| Widget | first second \\| third | 3 |',
      '| | • a • b | |',
    ]);
  });

  it('leaves no raw HTML: nested tables are flattened into their cell', () => {
    const html = '<table><tr><td>Outer</td><td><table><tr><td>x</td><td>y</td></tr><tr><td>1</td><td>2</td></tr></table></td></tr><tr><td>r2</td><td>v</td></tr></table>';
    const { markdown } = htmlToMarkdown(html);
    expect(markdown).not.to.match(/<[a-z/]/i);
    expect(markdown).to.contain('| Outer | x, y; 1, 2 |');
  });

  it('keeps headings, lists, links, emphasis; drops scripts, styles and images data', () => {
    const html = `<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head><body>
      <h1>Guide</h1><h2>Install</h2><p>Run <strong>npm</strong> <em>now</em>, see <a href="https://example.com/x" title="X">docs</a>.</p>
      <ol><li>one</li><li>two<ul><li>nested</li></ul></li></ol><img alt="A chart" src="data:image/png;base64,AAAA"></body></html>`;
    const { markdown, title } = htmlToMarkdown(html);
    expect(title).to.equal('T');
    expect(markdown).to.contain('# Guide\n\n## Install');
    expect(markdown).to.contain('Run **npm** *now*, see [docs](https://example.com/x "X").');
    expect(markdown).to.contain('1. one\n2. two\n   * nested');
    expect(markdown).to.contain('[Image: A chart]');
    expect(markdown).not.to.match(/alert|p\{\}|base64/);
  });

  it('web pages keep their main content and drop navigation', async () => {
    const html = `<html><body><nav><a href="/">Home</a> Log in to continue</nav><main><h1>Article</h1><p>${'Body text. '.repeat(30)}</p></main><footer>Footer links</footer></body></html>`;
    const { markdown } = await convertToMarkdown(enc(html), 'html');
    expect(markdown).to.match(/^# Article/);
    expect(markdown).not.to.match(/Log in|Footer/);
  });
});

// ---- OOXML safety -----------------------------------------------------------------------------------

describe('conversion: OOXML external references (CVE-2025-11849 class)', () => {
  let server: http.Server;
  let hits = 0;
  let base = '';
  let secretFile = '';
  const secret = 'c0ffee00-secret-file-content';

  before(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end('fetched');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    secretFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'conversion-test-')), 'secret.txt');
    fs.writeFileSync(secretFile, secret);
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(path.dirname(secretFile), { recursive: true, force: true });
  });

  const linkedImage = (rid: string) =>
    `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="100" cy="100"/><wp:docPr id="1" name="Picture 1" descr="linked picture"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="0" name="x.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="${rid}"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;

  it('ignores linked images, templates and OLE links, never fetches them, and says so', async () => {
    const bytes = docx(
      `${para('Body text stays.')}${linkedImage('rIdFile')}${linkedImage('rIdHttp')}<w:p><w:hyperlink r:id="rIdLink"><w:r><w:t>a hyperlink</w:t></w:r></w:hyperlink></w:p>`,
      {
        documentRels: `<?xml version="1.0"?><Relationships xmlns="${NS.rels}">
          <Relationship Id="rIdFile" Type="${REL}/image" Target="file://${secretFile}" TargetMode="External"/>
          <Relationship Id="rIdHttp" Type="${REL}/image" Target="${base}/image.png" TargetMode="External"/>
          <Relationship Id="rIdOle" Type="${REL}/oleObject" Target="${base}/object.bin" TargetMode="External"/>
          <Relationship Id="rIdLink" Type="${REL}/hyperlink" Target="https://example.com/page" TargetMode="External"/>
        </Relationships>`,
        extra: {
          'word/settings.xml': `<?xml version="1.0"?><w:settings xmlns:w="${NS.w}" xmlns:r="${NS.r}"><w:attachedTemplate r:id="rIdT"/></w:settings>`,
          'word/_rels/settings.xml.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rIdT" Type="${REL}/attachedTemplate" Target="${base}/template.dotm" TargetMode="External"/></Relationships>`,
        },
      },
    );
    const result = await convertToMarkdown(bytes, 'docx');
    expect(result.markdown).to.contain('Body text stays.');
    expect(result.markdown).to.contain('[a hyperlink](https://example.com/page)');
    expect(result.markdown).to.contain('[Image: linked picture]');
    expect(result.markdown).not.to.contain(secret);
    expect(result.markdown).not.to.contain('fetched');
    expect(hits, 'no HTTP request may be made').to.equal(0);
    expect(result.warnings).to.have.length(1);
    expect(result.warnings[0]).to.match(/^Ignored 4 external references \(linked image, linked OLE object, attached template: .*\); external content is never fetched\.$/);
  });

  it('refuses a package whose main document lives outside the file', async () => {
    const bytes = docx(para('x'), {
      packageRels: `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="${base}/document.xml" TargetMode="External"/></Relationships>`,
    });
    const err = await rejection(convertToMarkdown(bytes, 'docx'));
    expect(err.kind).to.equal('unsafe');
    expect(err.message).to.match(/points to an external location .* never fetched/);
    expect(hits).to.equal(0);
  });

  it('refuses XML entity declarations in a package part', async () => {
    const tampered = zip({
      '[Content_Types].xml': `<?xml version="1.0"?><Types xmlns="${NS.types}"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
      '_rels/.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`,
      'word/document.xml': `<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY boom "&a;&a;&a;&a;">]><w:document xmlns:w="${NS.w}"><w:body>${para('&boom;')}</w:body></w:document>`,
    });
    const err = await rejection(convertToMarkdown(tampered, 'docx'));
    expect(err.kind).to.equal('unsafe');
  });
});

describe('conversion: zip bombs', function () {
  this.timeout(60_000);
  // A docx-shaped package whose document part is 110 MB of zeros: ~110 KB on disk.
  let bomb: Uint8Array;
  before(() => {
    bomb = zip(
      {
        '[Content_Types].xml': `<?xml version="1.0"?><Types xmlns="${NS.types}"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
        '_rels/.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/></Relationships>`,
        'word/document.xml': new Uint8Array(110 * 1024 * 1024),
      },
      1,
    );
  });

  it('refuses an archive that declares more than 100 MB, before inflating', async () => {
    expect(bomb.length).to.be.lessThan(200 * 1024);
    const started = Date.now();
    const err = await rejection(convertToMarkdown(bomb, 'docx'));
    expect(err.kind).to.equal('too-large');
    expect(err.message).to.match(/more than the 100 MB limit \(zip bomb protection\)/);
    expect(Date.now() - started).to.be.lessThan(1000);
  });

  it('stops inflating an entry that lies about its size', async () => {
    const lying = patchDeclaredSizes(bomb, 1000);
    const started = Date.now();
    const err = await rejection(convertToMarkdown(lying, 'docx'));
    expect(err.kind).to.equal('too-large');
    expect(err.message).to.match(/more than its declared size/);
    expect(Date.now() - started, 'inflation stops early').to.be.lessThan(2000);
  });

  it('refuses an entry whose compression ratio is past the limit', async () => {
    const small = zip({ '[Content_Types].xml': '<Types/>', 'word/document.xml': new Uint8Array(4 * 1024 * 1024) }, 9);
    const err = await rejection(convertToMarkdown(small, 'docx'));
    expect(err.kind).to.equal('too-large');
    expect(err.message).to.match(/expands \d+-fold .* past the 200:1 limit/);
  });

  it('honours a lower maxUncompressedBytes', async () => {
    const big = zip({ 'word/document.xml': noise(3 * 1024 * 1024) }, 0);
    const err = await rejection(convertToMarkdown(big, 'docx', { maxUncompressedBytes: 1024 * 1024 }));
    expect(err.kind).to.equal('too-large');
    expect(err.message).to.match(/more than the 1 MB limit/);
  });
});

// ---- formats ----------------------------------------------------------------------------------------

describe('conversion: spreadsheets', () => {
  it('an empty workbook fails as empty', async () => {
    const err = await rejection(convertToMarkdown(xlsx([{ name: 'Sheet1', rows: '' }, { name: 'Sheet2', rows: '<row r="1"/>' }]), 'xlsx'));
    expect(err.kind).to.equal('empty');
    expect(err.message).to.equal('This workbook is empty: no sheet has any cell values to index.');
  });

  it('writes each sheet as a table with a header row: shared strings, dates, percents, booleans, title rows', async () => {
    const styles = `<?xml version="1.0"?><styleSheet xmlns="${NS.ssml}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/></numFmts><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="9"/></cellXfs></styleSheet>`;
    const rows = [
      '<row r="1"><c r="A1" t="s"><v>0</v></c></row>',
      '<row r="3"><c r="A3" t="s"><v>1</v></c><c r="B3" t="s"><v>2</v></c><c r="C3" t="s"><v>3</v></c><c r="D3" t="inlineStr"><is><t>Done</t></is></c></row>',
      '<row r="4"><c r="A4" t="s"><v>4</v></c><c r="B4" s="1"><v>45292</v></c><c r="C4" s="2"><v>0.125</v></c><c r="D4" t="b"><v>1</v></c></row>',
      '<row r="5"><c r="A5" t="s"><v>5</v></c><c r="B5" s="1"><v>45293</v></c><c r="C5"><v>1.1000000000000001</v></c><c r="D5" t="b"><v>0</v></c></row>',
    ].join('');
    const bytes = xlsx([{ name: 'Q1 Sales', rows }, { name: 'Empty', rows: '' }], ['Quarterly report', 'Product', 'Date', 'Share', 'Widget | A', 'Gadget'], styles);
    const { markdown } = await convertToMarkdown(bytes, 'xlsx');
    expect(markdown).to.equal(
      [
        '## Q1 Sales',
        '',
        'Quarterly report',
        '',
        '| Product | Date | Share | Done |',
        '| --- | --- | --- | --- |',
        '| Widget \\| A | 2024-01-01 | 13% | TRUE |',
        '| Gadget | 2024-01-02 | 1.1 | FALSE |',
      ].join('\n'),
    );
  });

  it('splits tables that sit side by side', async () => {
    const cell = (ref: string, v: number) => `<c r="${ref}"><v>${v}</v></c>`;
    const rows = `<row r="1">${cell('A1', 1)}${cell('B1', 2)}${cell('E1', 3)}${cell('F1', 4)}</row><row r="2">${cell('A2', 5)}${cell('B2', 6)}${cell('E2', 7)}${cell('F2', 8)}</row>`;
    const { markdown } = await convertToMarkdown(xlsx([{ name: 'S', rows }]), 'xlsx');
    expect(markdown).to.equal('## S\n\n| 1 | 2 |\n| --- | --- |\n| 5 | 6 |\n\n| 3 | 4 |\n| --- | --- |\n| 7 | 8 |');
  });
});

describe('conversion: PDF', () => {
  it('extracts the text layer', async () => {
    const { markdown } = await convertToMarkdown(pdf('Hello PDF world, this page has a text layer.'), 'pdf');
    expect(markdown).to.equal('Hello PDF world, this page has a text layer.');
  });

  it('a PDF without a text layer fails with an explanation', async () => {
    const err = await rejection(convertToMarkdown(pdf(undefined), 'pdf'));
    expect(err.kind).to.equal('no-text-layer');
    expect(err.message).to.match(/^This PDF has no text layer \(it is a scan or a photo of pages\); OCR is not supported/);
  });
});

describe('conversion: docx structure', () => {
  it('keeps headings, lists and tables; equations become LaTeX', async () => {
    const table = `<w:tbl><w:tr><w:tc>${para('Key')}</w:tc><w:tc>${para('Value')}</w:tc></w:tr><w:tr><w:tc>${para('a')}</w:tc><w:tc>${para('1')}</w:tc></w:tr></w:tbl>`;
    const math = `<w:p><w:r><w:t xml:space="preserve">Area: </w:t></w:r><m:oMath xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"><m:r><m:t>A=π</m:t></m:r><m:sSup><m:e><m:r><m:t>r</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath></w:p>`;
    const bytes = docx(`${para('Manual', 'Title')}${para('Install', 'Heading1')}${para('Steps follow.')}${table}${math}`, {
      extra: {
        'word/styles.xml': `<?xml version="1.0"?><w:styles xmlns:w="${NS.w}"><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`,
      },
      documentRels: `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rIdS" Type="${REL}/styles" Target="styles.xml"/></Relationships>`,
    });
    // The math namespace is declared on the document element in real files.
    const { markdown } = await convertToMarkdown(bytes, 'docx');
    expect(markdown).to.contain('# Manual\n\n# Install\n\nSteps follow.');
    expect(markdown).to.contain('| Key | Value |\n| --- | --- |\n| a | 1 |');
    expect(markdown).to.contain('Area: $A=πr^{2}$');
  });
});

// ---- characters escaped in XML inside table cells -----------------------------------------------------

describe('conversion: characters escaped in XML come out as themselves in table cells, nested tables included', () => {
  /** As each format's XML writes them: entities, numeric references, and a cell that starts with `>`. */
  const ESCAPED = ['a &amp; b', '&lt;tag&gt;', '&#38; &#x3C;&#62;', '&gt; 5 years'];
  const PLAIN = ['a & b', '<tag>', '& <>', '> 5 years'];
  const HEADER = '| a & b | <tag> |\n| --- | --- |\n| & <> | > 5 years |';
  const NESTED = '| a & b | <tag> |\n| --- | --- |\n| & <> | > 5 years x & y; <z> |';
  const NESTED_ESCAPED = ['x &amp; y', '&lt;z&gt;'];

  const odfNs =
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"';
  const odfCell = (inner: string) => `<table:table-cell>${inner}</table:table-cell>`;
  /** A 2×2 table; the last cell also holds a table of two rows, each of one cell, when `nested`. */
  function odfTable(nested: boolean): string {
    const inner = nested ? `<table:table>${NESTED_ESCAPED.map((t) => `<table:table-row>${odfCell(`<text:p>${t}</text:p>`)}</table:table-row>`).join('')}</table:table>` : '';
    const cells = ESCAPED.map((t, i) => odfCell(`<text:p>${t}</text:p>${i === 3 ? inner : ''}`));
    return `<table:table table:name="T"><table:table-row>${cells[0]}${cells[1]}</table:table-row><table:table-row>${cells[2]}${cells[3]}</table:table-row></table:table>`;
  }
  const odf = (mimetype: string, body: string) =>
    zip({ mimetype, 'content.xml': `<?xml version="1.0"?><office:document-content ${odfNs}><office:body>${body}</office:body></office:document-content>` });

  it('docx (through its HTML), with a nested table flattened into its cell', async () => {
    const cell = (text: string, extra = '') => `<w:tc>${para(text)}${extra}</w:tc>`;
    const inner = `<w:tbl>${NESTED_ESCAPED.map((t) => `<w:tr>${cell(t)}</w:tr>`).join('')}</w:tbl>`;
    const table = `<w:tbl><w:tr>${cell(ESCAPED[0]!)}${cell(ESCAPED[1]!)}</w:tr><w:tr>${cell(ESCAPED[2]!)}${cell(ESCAPED[3]!, inner)}</w:tr></w:tbl>`;
    expect((await convertToMarkdown(docx(table), 'docx')).markdown).to.equal(NESTED);
  });

  it('odt and odp, with a nested table flattened into its cell', async () => {
    const odt = odf('application/vnd.oasis.opendocument.text', `<office:text>${odfTable(true)}</office:text>`);
    expect((await convertToMarkdown(odt, 'odt')).markdown).to.equal(NESTED);
    const odp = odf('application/vnd.oasis.opendocument.presentation', `<office:presentation><draw:page><draw:frame>${odfTable(true)}</draw:frame></draw:page></office:presentation>`);
    expect((await convertToMarkdown(odp, 'odp')).markdown).to.equal(`## Slide 1\n\n${NESTED}`);
  });

  it('ods, xlsx (shared and inline strings) and pptx', async () => {
    const ods = odf('application/vnd.oasis.opendocument.spreadsheet', `<office:spreadsheet>${odfTable(false)}</office:spreadsheet>`);
    expect((await convertToMarkdown(ods, 'ods')).markdown).to.equal(`## T\n\n${HEADER}`);

    const rows = `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>${ESCAPED[1]}</t></is></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2" t="str"><v>${ESCAPED[3]}</v></c></row>`;
    const book = xlsx([{ name: 'T', rows }], [ESCAPED[0]!, ESCAPED[2]!]);
    expect((await convertToMarkdown(book, 'xlsx')).markdown).to.equal(`## T\n\n${HEADER}`);

    const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
    const tc = (text: string) => `<a:tc><a:txBody><a:bodyPr/><a:p><a:r><a:t>${text}</a:t></a:r></a:p></a:txBody></a:tc>`;
    const slide = `<?xml version="1.0"?><p:sld xmlns:p="${P}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree><p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr>${tc(ESCAPED[0]!)}${tc(ESCAPED[1]!)}</a:tr><a:tr>${tc(ESCAPED[2]!)}${tc(ESCAPED[3]!)}</a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame></p:spTree></p:cSld></p:sld>`;
    const pptx = zip({
      '[Content_Types].xml': `<?xml version="1.0"?><Types xmlns="${NS.types}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>`,
      '_rels/.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="ppt/presentation.xml"/></Relationships>`,
      'ppt/presentation.xml': `<?xml version="1.0"?><p:presentation xmlns:p="${P}" xmlns:r="${NS.r}"><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>`,
      'ppt/_rels/presentation.xml.rels': `<?xml version="1.0"?><Relationships xmlns="${NS.rels}"><Relationship Id="rId2" Type="${REL}/slide" Target="slides/slide1.xml"/></Relationships>`,
      'ppt/slides/slide1.xml': slide,
    });
    expect((await convertToMarkdown(pptx, 'pptx')).markdown).to.equal(`## Slide 1\n\n${HEADER}`);
  });

  it('keeps the text the same outside tables, and inside cells keeps what means something inline', async () => {
    expect(PLAIN.join(' ')).to.equal('a & b <tag> & <> > 5 years');
    const table = `<w:tbl><w:tr><w:tc>${para('# of items')}</w:tc><w:tc>${para('1. first')}</w:tc></w:tr><w:tr><w:tc>${para('- dash')}</w:tc><w:tc>${para('*star*')}</w:tc></w:tr></w:tbl>`;
    const { markdown } = await convertToMarkdown(docx(`${para('&gt; quoted')}${table}`), 'docx');
    // A paragraph starting with ">" stays escaped (it would be a quote); in a cell it needs no escape.
    expect(markdown).to.equal('\\> quoted\n\n| # of items | 1. first |\n| --- | --- |\n| - dash | \\*star\\* |');
  });
});

// ---- time limits ------------------------------------------------------------------------------------

describe('conversion: time limits', () => {
  const bigWorkbook = () => {
    let rows = '';
    for (let r = 1; r <= 3000; r++) {
      rows += `<row r="${r}">`;
      for (let c = 0; c < 10; c++) rows += `<c r="${String.fromCharCode(65 + c)}${r}"><v>${r * c}</v></c>`;
      rows += '</row>';
    }
    return xlsx([{ name: 'Big', rows }]);
  };

  it('stops after maxMs with a timeout error', async () => {
    const bytes = bigWorkbook();
    const err = await rejection(convertToMarkdown(bytes, 'xlsx', { maxMs: 1 }));
    expect(err.kind).to.equal('timeout');
    expect(err.message).to.match(/^The conversion took longer than 1 ms and was stopped/);
  });

  it('honours an AbortSignal', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await rejection(convertToMarkdown(bigWorkbook(), 'xlsx', { signal: controller.signal }));
    expect(err.kind).to.equal('aborted');
    expect(err.message).to.equal('The conversion was cancelled.');
  });

  it('converts the same workbook within the default limit', async () => {
    const { markdown } = await convertToMarkdown(bigWorkbook(), 'xlsx');
    expect(markdown.split('\n').filter((l) => l.startsWith('|'))).to.have.length(3000 + 1);
  });
});

describe('conversion: isolated in a worker thread', function () {
  this.timeout(20_000);

  it('gives the same result as the in-process conversion', async () => {
    const bytes = docx(`${para('Isolated body text.')}${para('Second paragraph.')}`);
    const isolated = await convertToMarkdownIsolated(bytes, 'docx');
    const inProcess = await convertToMarkdown(bytes, 'docx');
    expect(isolated).to.deep.equal(inProcess);
  });

  it('passes conversion errors through with their kind', async () => {
    const err = await rejection(convertToMarkdownIsolated(xlsx([{ name: 'S', rows: '' }]), 'xlsx'));
    expect(err.kind).to.equal('empty');
  });

  it('kills a conversion stuck in one synchronous step at the deadline', async () => {
    // ~4 MB of HTML: turndown converts it in one synchronous call of several seconds.
    const html = enc(`<html><body>${'<p>Lorem <b>ipsum</b> dolor <i>sit</i> amet, consectetur.</p>'.repeat(70_000)}</body></html>`);
    const started = Date.now();
    const err = await rejection(convertToMarkdownIsolated(html, 'html', { maxMs: 200 }));
    expect(err.kind).to.equal('timeout');
    expect(Date.now() - started).to.be.lessThan(2500);
  });

  it('is cancelled by its AbortSignal', async () => {
    const controller = new AbortController();
    const html = enc(`<html><body>${'<p>Lorem ipsum dolor sit amet.</p>'.repeat(70_000)}</body></html>`);
    const work = convertToMarkdownIsolated(html, 'html', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(work);
    expect(err.kind).to.equal('aborted');
  });
});
