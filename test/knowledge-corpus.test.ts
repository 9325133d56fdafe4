import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { check, CORPUS, loadCorpus, writeCanary } from './support/corpus.js';
import { settledDocument, uploadFile } from './support/documents.js';
import { testPlatform } from './support/global.js';

/**
 * The real-document corpus uploaded through the API, converted by the `convertDocument` workflow, and
 * chunked and embedded: every `ok` file becomes a ready document whose Markdown has its expected
 * strings, every `fail` file a failed document with a readable reason and no chunks. Skipped, with a
 * note, when ../shared is not beside the checkout.
 */
describe('knowledge: the document corpus through the platform', function () {
  this.timeout(300_000);
  const files = loadCorpus();
  if (!files) {
    it('corpus uploads', function () {
      console.log(`      NOTE: corpus folder ${CORPUS} not found; the upload corpus tests are skipped.`);
      this.skip();
    });
    return;
  }

  let key: string;
  const written: string[] = [];
  before(async () => {
    ({ key } = await newTenant('corpus'));
    await call('POST', '/v1/knowledge', { key, body: { name: 'corpus' } });
  });
  after(() => written.forEach((file) => fs.rmSync(file, { force: true })));

  for (const e of files) {
    it(`${e.file} → ${e.outcome}`, async () => {
      const canary = writeCanary(e);
      if (canary) written.push(canary);
      const bytes = fs.readFileSync(path.join(CORPUS, e.file));
      const upload = await uploadFile(key, 'corpus', bytes, path.basename(e.file));
      expect(upload.status, JSON.stringify(upload.body)).to.equal(202);
      const doc = await settledDocument(key, 'corpus', upload.body.document.id, 240_000);
      const chunks = await testPlatform().db.selectFrom('chunks').select('id').where('document_id', '=', doc.id).execute();

      if (e.outcome === 'ok' || (e.outcome === 'optional' && doc.status === 'ready')) {
        expect(doc.status, `${e.file}: ${doc.error}`).to.equal('ready');
        const problems = check(doc.markdown, e);
        expect(problems, `${e.file}:\n  ${problems.join('\n  ')}`).to.deep.equal([]);
        expect(chunks.length).to.equal(doc.chunk_count).and.be.greaterThan(0);
      } else {
        expect(doc.status, e.file).to.equal('failed');
        expect(doc.error, e.file).to.match(/^[A-Z].{20,}/s);
        if (e.outcome === 'optional') expect(doc.error).to.match(/support/i);
        expect(doc.chunk_count).to.equal(0);
        expect(chunks).to.deep.equal([]);
      }
    });
  }
});
