import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ConversionError, convertDocument, type DocumentFormat } from '../activities/conversion/index.js';
import { check, CORPUS, loadCorpus, writeCanary } from './support/corpus.js';

/**
 * The real-document corpus (../shared/corpus/documents, used in place, never copied): every file in
 * expectations.json converts (`ok`) with its expected strings, or fails with the expected kind and a
 * readable reason (`fail`); `optional` formats either convert with their strings or fail as
 * unsupported. Skipped, with a note, when the folder is absent.
 */

describe('conversion: real-document corpus', function () {
  const files = loadCorpus();
  if (!files) {
    it('corpus tests', function () {
      console.log(`      NOTE: corpus folder ${CORPUS} not found; the real-document corpus tests are skipped.`);
      this.skip();
    });
    return;
  }

  const timings = new Map<string, number[]>();
  const results = { passed: 0, total: 0 };
  const written: string[] = [];

  after(function () {
    for (const file of written) fs.rmSync(file, { force: true });
    const rows = [...timings.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([format, ms]) => {
        const sorted = [...ms].sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)]!;
        return `${format} n=${ms.length} median ${median} ms, max ${sorted[sorted.length - 1]} ms`;
      });
    console.log(`      corpus: ${results.passed}/${results.total} files as expected`);
    console.log(`      per-format conversion time: ${rows.join('; ')}`);
  });

  for (const e of files) {
    it(`${e.file} → ${e.outcome}${e.failKind ? ` (${e.failKind})` : ''}`, async function () {
      results.total++;
      const canary = writeCanary(e);
      if (canary) written.push(canary);
      const bytes = new Uint8Array(fs.readFileSync(path.join(CORPUS, e.file)));
      const started = performance.now();
      let result: { markdown: string; format: DocumentFormat } | undefined;
      let error: unknown;
      try {
        result = await convertDocument(bytes, { filename: path.basename(e.file) });
      } catch (err) {
        error = err;
      }
      const elapsed = Math.round(performance.now() - started);
      const format = result?.format ?? path.extname(e.file).slice(1);
      timings.set(format, [...(timings.get(format) ?? []), elapsed]);

      if (e.outcome === 'fail') {
        expect(error, `${e.file} should fail as ${e.failKind}`).to.be.instanceOf(ConversionError);
        const err = error as ConversionError;
        expect(err.kind).to.equal(e.failKind);
        expect(err.message).to.match(/^[A-Z].{20,}\.$/s, 'a readable sentence');
      } else if (error) {
        expect(e.outcome, `${e.file} failed: ${String(error)}`).to.equal('optional');
        expect(error).to.be.instanceOf(ConversionError);
        expect((error as ConversionError).kind).to.equal('unsupported');
      } else {
        const problems = check(result!.markdown, e);
        expect(problems, `${e.file}:\n  ${problems.join('\n  ')}`).to.deep.equal([]);
        expect(result!.markdown).not.to.match(/<\/?(table|tr|td|th|div|span|p)\b/i, 'no raw HTML');
      }
      results.passed++;
    });
  }
});
