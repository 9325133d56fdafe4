import { expect } from 'chai';
import { chunkMarkdown, type Chunk } from '../activities/chunking/index.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** Deterministic prose: sentences of varied length built from a small vocabulary. */
function prose(sentences: number, seed = 7): string {
  const vocabulary = ['agents', 'retrieval', 'workflow', 'temporal', 'durable', 'postgres', 'vector', 'chunk', 'heading', 'platform', 'tenant', 'document', 'embedding', 'search', 'model', 'tool'];
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const out: string[] = [];
  for (let s = 0; s < sentences; s++) {
    const n = 6 + (next() % 14);
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(vocabulary[next() % vocabulary.length]!);
    const sentence = ws.join(' ');
    out.push(`${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`);
  }
  return out.join(' ');
}

function paragraphs(count: number, sentences: number): string {
  return Array.from({ length: count }, (_, i) => prose(sentences, i + 1)).join('\n\n');
}

describe('chunking: sizes and boundaries', () => {
  it('returns nothing for empty or blank Markdown', () => {
    expect(chunkMarkdown('')).to.deep.equal([]);
    expect(chunkMarkdown('  \n\n \n')).to.deep.equal([]);
  });

  it('keeps a short document in one chunk', () => {
    expect(chunkMarkdown('Hello world.')).to.deep.equal([{ content: 'Hello world.', headingPath: [], index: 0 }]);
  });

  it('packs paragraphs into chunks of about targetChars, none over the soft maximum', () => {
    const md = paragraphs(40, 4);
    const chunks = chunkMarkdown(md);
    expect(chunks.length).to.be.greaterThan(5);
    for (const c of chunks) expect(c.content.length, c.content).to.be.at.most(1300);
    const inner = chunks.slice(0, -1).map((c) => c.content.length);
    const average = inner.reduce((a, b) => a + b, 0) / inner.length;
    expect(average).to.be.within(700, 1300);
    expect(chunks.map((c) => c.index)).to.deep.equal(chunks.map((_, i) => i));
  });

  it('honours a custom targetChars', () => {
    const chunks = chunkMarkdown(paragraphs(20, 3), { targetChars: 300 });
    for (const c of chunks) expect(c.content.length).to.be.at.most(390);
    expect(chunks.length).to.be.greaterThan(10);
  });

  it('splits a huge paragraph by sentences and never inside a word', () => {
    const md = prose(120);
    const chunks = chunkMarkdown(md);
    expect(chunks.length).to.be.greaterThan(4);
    for (const c of chunks) {
      expect(c.content.length).to.be.at.most(1300);
      expect(c.content, 'chunks end at sentence ends').to.match(/\.$/);
    }
    expect(words(chunks.map((c) => c.content).join(' ')), 'every word intact and in order').to.deep.equal(words(md));
  });

  it('splits a sentence without punctuation at spaces, and only over-long tokens mid-token', () => {
    const sentence = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkMarkdown(sentence);
    expect(words(chunks.map((c) => c.content).join(' '))).to.deep.equal(words(sentence));
    const token = 'x'.repeat(3000);
    const cut = chunkMarkdown(`before ${token} after`);
    expect(cut.map((c) => c.content).join('').replace(/\s+/g, '')).to.equal(`before${token}after`);
    for (const c of cut) expect(c.content.length).to.be.at.most(1300);
  });

  it('splits CJK text at sentence ends', () => {
    const sentence = '这是一个用于测试分块的中文句子，它没有空格。';
    const md = sentence.repeat(120);
    const chunks = chunkMarkdown(md);
    expect(chunks.length).to.be.greaterThan(1);
    for (const c of chunks) {
      expect(c.content.length).to.be.at.most(1300);
      expect(c.content.endsWith('。')).to.equal(true);
    }
    expect(chunks.map((c) => c.content).join('')).to.equal(md);
  });

  it('is deterministic', () => {
    const md = `# A\n\n${paragraphs(10, 5)}\n\n## B\n\n| h1 | h2 |\n| --- | --- |\n${Array.from({ length: 80 }, (_, i) => `| r${i} | ${prose(1, i)} |`).join('\n')}`;
    const first = chunkMarkdown(md);
    const second = chunkMarkdown(md);
    expect(second).to.deep.equal(first);
    expect(JSON.stringify(chunkMarkdown(md, { targetChars: 1000 }))).to.equal(JSON.stringify(first));
  });
});

describe('chunking: structure', () => {
  const doc = [
    'Preamble before any heading.',
    '# Guide',
    'Welcome to the guide.',
    '## Install',
    'Run the installer.',
    '### Linux',
    'Use the package manager.',
    '## Usage',
    'Start it.',
    '# Reference',
    '## API',
    'Endpoints are listed here.',
  ].join('\n\n');

  it('cuts at headings and carries each chunk’s heading path', () => {
    const chunks = chunkMarkdown(doc);
    expect(chunks.map((c) => [c.headingPath, c.content])).to.deep.equal([
      [[], 'Preamble before any heading.'],
      [['Guide'], '# Guide\n\nWelcome to the guide.'],
      [['Guide', 'Install'], '## Install\n\nRun the installer.'],
      [['Guide', 'Install', 'Linux'], '### Linux\n\nUse the package manager.'],
      [['Guide', 'Usage'], '## Usage\n\nStart it.'],
      [['Reference', 'API'], '# Reference\n\n## API\n\nEndpoints are listed here.'],
    ]);
  });

  it('keeps the heading path on every piece of a long section', () => {
    const chunks = chunkMarkdown(`# Guide\n\n## Install\n\n${paragraphs(12, 5)}\n\n## Next\n\nDone.`);
    const install = chunks.filter((c) => c.headingPath.join('/') === 'Guide/Install');
    expect(install.length).to.be.greaterThan(2);
    expect(install[0]!.content.startsWith('# Guide\n\n## Install\n\n')).to.equal(true);
    expect(chunks[chunks.length - 1]).to.deep.include({ headingPath: ['Guide', 'Next'], content: '## Next\n\nDone.' });
  });

  it('reads setext headings and strips closing hashes and escapes from the path', () => {
    const chunks = chunkMarkdown('Title\n=====\n\nIntro.\n\n## Part \\#1 ##\n\nBody.\n\nSub\n---\n\nMore.');
    expect(chunks.map((c) => c.headingPath)).to.deep.equal([['Title'], ['Title', 'Part #1'], ['Title', 'Sub']]);
  });

  it('does not treat # inside code fences as headings, and keeps a fence whole', () => {
    const code = ['```bash', '# not a heading', ...Array.from({ length: 30 }, (_, i) => `echo line ${i}`), '```'].join('\n');
    const chunks = chunkMarkdown(`# Real\n\n${prose(6)}\n\n${code}\n\nAfter the code.`);
    expect(chunks.every((c) => c.headingPath.join('/') === 'Real')).to.equal(true);
    const withFence = chunks.filter((c) => c.content.includes('```'));
    expect(withFence).to.have.length(1);
    expect(withFence[0]!.content).to.contain(code);
  });

  it('splits only a huge code fence, re-fencing every piece', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `const value${i} = compute(${i});`);
    const chunks = chunkMarkdown(['```ts', ...lines, '```'].join('\n'));
    expect(chunks.length).to.be.greaterThan(5);
    for (const c of chunks) {
      expect(c.content.startsWith('```ts\n')).to.equal(true);
      expect(c.content.endsWith('\n```')).to.equal(true);
      expect(c.content.length).to.be.at.most(1300);
    }
    const body = chunks.flatMap((c) => c.content.split('\n').slice(1, -1));
    expect(body).to.deep.equal(lines);
  });

  it('repeats a table’s header row and separator in every chunk of a long table', () => {
    const header = '| Product | Region | Notes |';
    const separator = '| --- | --- | --- |';
    const rows = Array.from({ length: 200 }, (_, i) => `| Item ${i} | Region ${i % 7} | ${prose(1, i)} |`);
    const md = `## Sales\n\nThe table below lists items.\n\n${[header, separator, ...rows].join('\n')}\n\nAfter the table.`;
    const chunks = chunkMarkdown(md);
    const tableChunks = chunks.filter((c) => c.content.includes('| Item '));
    expect(tableChunks.length).to.be.greaterThan(5);
    for (const c of tableChunks) {
      const lines = c.content.split('\n');
      const at = lines.indexOf(header);
      expect(at, c.content).to.be.at.least(0);
      expect(lines[at + 1]).to.equal(separator);
      expect(c.content.length).to.be.at.most(1300);
      expect(c.headingPath).to.deep.equal(['Sales']);
    }
    const seen = tableChunks.flatMap((c) => c.content.split('\n').filter((l) => l.startsWith('| Item ')));
    expect(seen, 'every row exactly once, in order').to.deep.equal(rows);
  });

  it('splits a long list between items', () => {
    const items = Array.from({ length: 80 }, (_, i) => `* Item ${i}: ${prose(1, i)}`);
    const chunks = chunkMarkdown(items.join('\n'));
    expect(chunks.length).to.be.greaterThan(2);
    for (const c of chunks) {
      expect(c.content.startsWith('* Item ')).to.equal(true);
      expect(c.content.length).to.be.at.most(1300);
    }
    expect(chunks.flatMap((c) => c.content.split('\n'))).to.deep.equal(items);
  });

  it('covers every word of a mixed document exactly once (besides repeated table headers)', () => {
    const md = [
      '# Guide',
      paragraphs(4, 6),
      '## Table',
      ['| a | b |', '| --- | --- |', ...Array.from({ length: 60 }, (_, i) => `| ${i} | ${prose(1, i)} |`)].join('\n'),
      '## List',
      Array.from({ length: 30 }, (_, i) => `1. step ${i} ${prose(1, i + 100)}`).join('\n'),
    ].join('\n\n');
    const chunks: Chunk[] = chunkMarkdown(md);
    const rebuilt = chunks
      .map((c, i) => (i > 0 && c.content.startsWith('| a | b |\n| --- | --- |') && chunks[i - 1]!.content.includes('| a | b |') ? c.content.split('\n').slice(2).join('\n') : c.content))
      .join('\n');
    expect(words(rebuilt)).to.deep.equal(words(md));
  });
});
