import { expect } from 'chai';
import iconv from 'iconv-lite';
import { sharedEmbedder } from '../activities/embedding/index.js';
import { replaceDocumentChunks } from '../db/chunks.js';
import { withTenant } from '../db/tenant-transaction.js';
import { call, newTenant } from './support/api.js';
import { createBuiltinTool, publishAgent, scriptedGraph } from './support/agents.js';
import { settledDocument, uploadFile } from './support/documents.js';
import { testPlatform } from './support/global.js';
import { stream } from './support/sse.js';

const GUIDE = `# Gardening guide

## Tomatoes

Tomatoes need at least six hours of direct sunlight a day and deep, infrequent watering.

## Roses

Prune roses in late winter, just before new growth begins, cutting above an outward-facing bud.
`;

describe('knowledge', function () {
  this.timeout(120_000);
  let key: string;
  before(async () => {
    ({ key } = await newTenant('knowledge'));
  });

  async function addText(kb: string, title: string, text: string, format?: string) {
    const response = await call('POST', `/v1/knowledge/${kb}/documents`, { key, body: { title, text, ...(format && { format }) } });
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    expect(response.body.document.status).to.be.oneOf(['queued', 'converting', 'ready']);
    return settledDocument(key, kb, response.body.document.id);
  }

  it('creates (201), returns existing by name (200), renames with PATCH (409 on a taken name)', async () => {
    const created = await call('POST', '/v1/knowledge', { key, body: { name: 'handbook', description: 'company handbook' } });
    expect(created.status).to.equal(201);
    expect(created.body.knowledge_base).to.include({ name: 'handbook', description: 'company handbook', document_count: 0, graph: null });
    const again = await call('POST', '/v1/knowledge', { key, body: { name: 'handbook' } });
    expect(again.status).to.equal(200);
    expect(again.body.knowledge_base.id).to.equal(created.body.knowledge_base.id);

    await call('POST', '/v1/knowledge', { key, body: { name: 'taken' } });
    expect((await call('PATCH', '/v1/knowledge/handbook', { key, body: { name: 'taken' } })).status).to.equal(409);
    const renamed = await call('PATCH', '/v1/knowledge/handbook', { key, body: { name: 'staff-handbook', description: null } });
    expect(renamed.body.knowledge_base).to.include({ name: 'staff-handbook', description: null });
    expect((await call('PATCH', '/v1/knowledge/nothing', { key, body: { description: 'x' } })).status).to.equal(404);
    expect((await call('POST', '/v1/knowledge', { key, body: { name: 'x', nope: 1 } })).status).to.equal(400);
  });

  it('addresses a knowledge base by id first, then by name (db/refs.ts)', async () => {
    const first = (await call('POST', '/v1/knowledge', { key, body: { name: 'by-ref' } })).body.knowledge_base;
    // A second knowledge base named like the first one's id: the id still reaches the first.
    const second = (await call('POST', '/v1/knowledge', { key, body: { name: first.id } })).body.knowledge_base;
    expect((await call('PATCH', `/v1/knowledge/${first.id}`, { key, body: { description: 'first' } })).body.knowledge_base).to.include({ id: first.id, name: 'by-ref' });
    expect((await call('PATCH', `/v1/knowledge/${second.id}`, { key, body: { description: 'second' } })).body.knowledge_base).to.include({ id: second.id, name: first.id });
    // Creating by a taken name answers the row of that name, never the row whose id it spells.
    const again = await call('POST', '/v1/knowledge', { key, body: { name: first.id } });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.include({ created: false });
    expect(again.body.knowledge_base).to.include({ id: second.id, name: first.id });
    await call('DELETE', `/v1/knowledge/${second.id}`, { key });
    await call('DELETE', `/v1/knowledge/${first.id}`, { key });
  });

  it('makes a text document searchable: chunks with heading paths, hits with similarity', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'garden' } });
    const doc = await addText('garden', 'Gardening guide', GUIDE);
    expect(doc).to.include({ status: 'ready', error: null, format: 'md', title: 'Gardening guide' });
    expect(doc.chunk_count).to.be.at.least(1);
    expect(doc.markdown).to.include('Prune roses in late winter');

    const search = await call('POST', '/v1/knowledge/search', { key, body: { query: 'when should I cut back my rose bushes?', kb: 'garden', k: 1 } });
    expect(search.status).to.equal(200);
    const [best] = search.body.hits;
    expect(best).to.include({ document_id: doc.id, title: 'Gardening guide', kb: 'garden', via: 'vector' });
    expect(best.content).to.include('Prune roses');
    expect(best.heading_path).to.deep.equal(['Gardening guide', 'Roses']);

    const listed = await call('GET', '/v1/knowledge/garden/documents', { key });
    expect(listed.body.documents.map((d: { id: string }) => d.id)).to.deep.equal([doc.id]);
    expect((await call('GET', '/v1/knowledge', { key })).body.knowledge_bases.find((k: { name: string }) => k.name === 'garden').document_count).to.equal(1);
  });

  it('makes text searchable when its POST answers; larger text and binary formats are queued', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'at-once' } });
    const search = async (query: string) => (await call('POST', '/v1/knowledge/search', { key, body: { query, kb: 'at-once', k: 1 } })).body.hits;

    const posted = await call('POST', '/v1/knowledge/at-once/documents', {
      key,
      body: { title: 'Parking', text: 'Visitors park in the north lot behind building C; the south lot is for staff.' },
    });
    expect(posted.status).to.equal(202);
    expect(posted.body.document).to.include({ status: 'ready', chunk_count: 1 });
    expect((await search('where can guests leave their car?'))[0]).to.include({ document_id: posted.body.document.id });

    const small = await uploadFile(key, 'at-once', new TextEncoder().encode('The cafeteria serves lunch from noon until two.'), 'lunch.txt', 'text/plain');
    expect(small.status).to.equal(202);
    expect(small.body.document).to.include({ status: 'ready', format: 'txt', chunk_count: 1 });
    expect((await search('when is lunch served?'))[0]).to.include({ document_id: small.body.document.id });

    // Over 256 KB, a text upload goes to the background workflow like a binary format.
    const large = new TextEncoder().encode('The archive room keeps the minutes of every board meeting since 1990.\n\n'.repeat(3700));
    expect(large.length).to.be.above(256 * 1024);
    const queued = await uploadFile(key, 'at-once', large, 'archive.txt', 'text/plain');
    expect(queued.status).to.equal(202);
    expect(queued.body.document.status).to.be.oneOf(['queued', 'converting']);
    expect((await settledDocument(key, 'at-once', queued.body.document.id)).status).to.equal('ready');
  });

  it('takes a UTF-16 file whose heading holds half an emoji: the lone surrogate becomes U+FFFD, not a 500', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'cut-emoji' } });
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('# Release notes \uD83D\n\nThe mobile app now syncs drafts offline.', 'utf16le')]);
    const upload = await uploadFile(key, 'cut-emoji', bytes, 'notes.md', 'text/markdown');
    expect(upload.status, JSON.stringify(upload.body)).to.equal(202);
    expect(upload.body.document).to.include({ status: 'ready', chunk_count: 1 });
    const { body } = await call('GET', `/v1/knowledge/cut-emoji/documents/${upload.body.document.id}?markdown=true`, { key });
    expect(body.document.markdown).to.contain('Release notes \uFFFD');
    const hits = (await call('POST', '/v1/knowledge/search', { key, body: { query: 'offline drafts in the mobile app', kb: 'cut-emoji', k: 1 } })).body.hits;
    expect(hits[0]).to.include({ document_id: upload.body.document.id });
  });

  it("decodes a file part by the charset its Content-Type declares, and keeps that type", async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'labelled' } });
    const samples = [
      { text: 'Crème brûlée à la carte, naïve café.', charset: 'iso-8859-1' },
      { text: 'Zażółć gęślą jaźń, powiedział Łukasz.', charset: 'iso-8859-2' },
    ];
    for (const { text, charset } of samples) {
      const contentType = `text/plain;charset=${charset}`;
      const upload = await uploadFile(key, 'labelled', iconv.encode(text, charset), `${charset}.txt`, contentType);
      expect(upload.status, JSON.stringify(upload.body)).to.equal(202);
      expect(upload.body.document).to.include({ status: 'ready', content_type: contentType });
      const { body } = await call('GET', `/v1/knowledge/labelled/documents/${upload.body.document.id}?markdown=true`, { key });
      expect(body.document.markdown, charset).to.contain(text);
    }
  });

  it('searches every knowledge base unless scoped, defaults k to 5, and answers 404 for an unknown kb', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'many' } });
    for (let i = 0; i < 6; i++) await addText('many', `note ${i}`, `Note ${i}: the shipment for order ${i} leaves on day ${i}.`);
    const search = await call('POST', '/v1/knowledge/search', { key, body: { query: 'when does the order ship?' } });
    expect(search.body.hits).to.have.length(5);
    expect((await call('POST', '/v1/knowledge/search', { key, body: { query: 'x', kb: 'missing' } })).status).to.equal(404);
    expect((await call('POST', '/v1/knowledge/search', { key, body: { query: 'x', k: 51 } })).status).to.equal(400);
    expect((await call('POST', '/v1/knowledge/search', { key, body: {} })).status).to.equal(400);
  });

  it("holds a form's title to the JSON upload's 1–500 characters, and names a file without a name 'upload'", async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'titled' } });
    const post = async (title: string | undefined, filename: string) => {
      const form = new FormData();
      form.append('file', new Blob([new TextEncoder().encode('The loading dock opens at six.')], { type: 'text/plain' }), filename);
      if (title !== undefined) form.append('title', title);
      const response = await fetch(`${testPlatform().apiUrl}/v1/knowledge/titled/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      return { status: response.status, body: (await response.json()) as any };
    };
    for (const title of ['', 'x'.repeat(501), 'x'.repeat(70 * 1024)]) {
      const refused = await post(title, 'dock.txt');
      expect(refused.status, `a title of ${title.length}`).to.equal(400);
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).to.deep.equal(['body.title']);
    }
    expect((await post('é'.repeat(500), 'dock.txt')).body.document.title).to.equal('é'.repeat(500));
    // A filename that is only a folder has an empty base name; an empty filename is no file at all.
    const raw = async (filename: string) => {
      const boundary = 'raw-form-boundary';
      const response = await fetch(`${testPlatform().apiUrl}/v1/knowledge/titled/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\nThe dock closes at ten.\r\n--${boundary}--\r\n`,
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const folder = await raw('folder/');
    expect(folder.body.document?.title, JSON.stringify(folder.body)).to.equal('upload');
    expect((await raw('')).body.error.fields).to.deep.equal([{ field: 'body.file', message: 'is required' }]);
    const listed = (await call('GET', '/v1/knowledge/titled/documents', { key })).body.documents;
    expect(listed, 'nothing was written for a refused title').to.have.length(2);
  });

  it('takes an upload of exactly 4 MB and refuses 4 MB + 1 byte with 413', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'sizes' } });
    const line = 'All work and no play makes a very dull document indeed.\n';
    const limit = 4 * 1024 * 1024;
    const exact = Buffer.alloc(limit, ' ');
    for (let i = 0; i + line.length <= limit; i += 4096) exact.write(line, i);
    const ok = await uploadFile(key, 'sizes', exact, 'dull.txt', 'text/plain');
    expect(ok.status).to.equal(202);
    expect(ok.body.document).to.include({ size_bytes: limit, format: 'txt' });

    const over = await uploadFile(key, 'sizes', Buffer.concat([exact, Buffer.from('!')]), 'dull.txt', 'text/plain');
    expect(over.status).to.equal(413);
    expect(over.body.error.code).to.equal('payload_too_large');
    const docs = (await call('GET', '/v1/knowledge/sizes/documents', { key })).body.documents;
    expect(docs).to.have.length(1);
    await settledDocument(key, 'sizes', ok.body.document.id, 180_000);
  });

  it('fails what it cannot read with an explanation, and embeds nothing', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'junk' } });
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251));
    const upload = await uploadFile(key, 'junk', random, 'mystery.bin');
    expect(upload.status).to.equal(202);
    const doc = await settledDocument(key, 'junk', upload.body.document.id);
    expect(doc.status).to.equal('failed');
    expect(doc.error).to.be.a('string').and.not.equal('');
    expect(doc.chunk_count).to.equal(0);
    const chunks = await testPlatform().db.selectFrom('chunks').select('id').where('document_id', '=', doc.id).execute();
    expect(chunks).to.deep.equal([]);
  });

  it('writes a text document only once it is embedded: a knowledge base deleted meanwhile answers 404 and keeps nothing', async () => {
    const kbId: string = (await call('POST', '/v1/knowledge', { key, body: { name: 'vanishing' } })).body.knowledge_base.id;
    // Sixty sections of prose: a few seconds of embedding during the POST.
    const text = Array.from({ length: 60 }, (_, i) => `## Section ${i}\n\n${'The quarterly report covers revenue, hiring and the office move. '.repeat(14)}`).join('\n\n');
    const posting = call('POST', '/v1/knowledge/vanishing/documents', { key, body: { title: 'Report', text } });
    // Its first 32 chunks go to the embedder in one call: a queue that deep is this upload's.
    const embedder = sharedEmbedder();
    for (let i = 0; i < 3000 && embedder.stats().queued < 20; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(embedder.stats().queued, 'the upload is being embedded').to.be.at.least(20);

    // Nothing of it is written while it is embedded, so nothing is left half-done if the request dies.
    const { db } = testPlatform();
    expect(await db.selectFrom('documents').select('id').where('kb_id', '=', kbId).execute()).to.deep.equal([]);
    expect((await call('DELETE', '/v1/knowledge/vanishing', { key })).body.deleted).to.equal(true);
    const posted = await posting;
    expect(posted.status).to.equal(404);
    expect(posted.body.error.code).to.equal('not_found');
    expect(await db.selectFrom('documents').select('id').where('kb_id', '=', kbId).execute()).to.deep.equal([]);
    expect(await db.selectFrom('chunks').select('id').where('kb_id', '=', kbId).execute()).to.deep.equal([]);
  });

  it('stores a document of more chunks than one INSERT can bind (ten values a chunk)', async () => {
    // 7,000 chunks bind 70,000 values: past Postgres' 65,535 a statement, and past the 35,000 that broke
    // PGlite's connection. A 4 MB upload of short headed sections cuts into many more.
    await call('POST', '/v1/knowledge', { key, body: { name: 'many-chunks' } });
    const doc = await addText('many-chunks', 'Seed', 'One paragraph to take its vector from.');
    const { db } = testPlatform();
    const seed = await db.selectFrom('chunks').select(['kb_id', 'tenant_id', 'embedding', 'embedding_model', 'embedding_dtype']).where('document_id', '=', doc.id).executeTakeFirstOrThrow();
    const chunks = Array.from({ length: 7_000 }, (_, index) => ({
      index,
      content: `section ${index}`,
      headingPath: [`Heading ${index}`],
      embedded: { embedding: seed.embedding, embedding_model: seed.embedding_model, embedding_dtype: seed.embedding_dtype },
    }));
    await withTenant(db, seed.tenant_id, (tx) => replaceDocumentChunks(tx, seed.tenant_id, seed.kb_id, doc.id, chunks));
    const stored = await db.selectFrom('chunks').select(['index', 'content']).where('document_id', '=', doc.id).orderBy('index').execute();
    expect(stored).to.have.length(7_000);
    expect(stored[6_999]).to.deep.equal({ index: 6_999, content: 'section 6999' });
    // The connection still answers (PGlite's broke after an oversized statement).
    expect((await call('GET', `/v1/knowledge/many-chunks/documents/${doc.id}`, { key })).status).to.equal(200);
  });

  it('cascades a knowledge base delete to its documents and chunks; deletes one document', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'doomed' } });
    const a = await addText('doomed', 'a', 'First document about apples.');
    const b = await addText('doomed', 'b', 'Second document about bananas.');
    expect((await call('DELETE', `/v1/knowledge/doomed/documents/${a.id}`, { key })).body).to.deep.equal({ deleted: true, id: a.id });
    expect((await call('GET', `/v1/knowledge/doomed/documents/${a.id}`, { key })).status).to.equal(404);
    const { db } = testPlatform();
    expect(await db.selectFrom('chunks').select('id').where('document_id', '=', a.id).execute()).to.deep.equal([]);

    expect((await call('DELETE', '/v1/knowledge/doomed', { key })).body.deleted).to.equal(true);
    expect(await db.selectFrom('documents').select('id').where('id', '=', b.id).execute()).to.deep.equal([]);
    expect(await db.selectFrom('chunks').select('id').where('document_id', '=', b.id).execute()).to.deep.equal([]);
    expect((await call('GET', '/v1/knowledge/doomed/documents', { key })).status).to.equal(404);
  });

  it('keeps knowledge bases, documents and search to their tenant', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'private' } });
    const doc = await addText('private', 'secret', 'The launch code word is pineapple.');
    const other = await newTenant('knowledge-other');
    expect((await call('GET', '/v1/knowledge', { key: other.key })).body.knowledge_bases).to.deep.equal([]);
    for (const [method, path, body] of [
      ['GET', '/v1/knowledge/private/documents', undefined],
      ['GET', `/v1/knowledge/private/documents/${doc.id}`, undefined],
      ['DELETE', `/v1/knowledge/private/documents/${doc.id}`, undefined],
      ['PATCH', '/v1/knowledge/private', { description: 'mine now' }],
      ['DELETE', '/v1/knowledge/private', undefined],
      ['POST', '/v1/knowledge/search', { query: 'launch code', kb: 'private' }],
    ] as const) {
      expect((await call(method, path, { key: other.key, body })).status, `${method} ${path}`).to.equal(404);
    }
    expect((await call('POST', '/v1/knowledge/search', { key: other.key, body: { query: 'launch code word' } })).body.hits).to.deep.equal([]);
  });

  it('expands hits through related entities in graph mode', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'history', graph: { model: 'ollama/echo' } } });
    const ada = await addText('history', 'Ada', 'Ada Lovelace wrote notes on the Analytical Engine, including an algorithm.');
    const designed = await addText('history', 'Design', 'Charles Babbage designed the Analytical Engine in the 1830s.');
    const born = await addText('history', 'Birth', 'Charles Babbage was born in London.');
    for (const doc of [ada, designed, born]) expect(doc.error).to.equal(null);
    // Another knowledge base's graph knows Babbage too; a search scoped to `history` stays in it.
    await call('POST', '/v1/knowledge', { key, body: { name: 'engines', graph: { model: 'ollama/echo' } } });
    expect((await addText('engines', 'Difference', 'Charles Babbage designed the Difference Engine.')).error).to.equal(null);

    const vector = await call('POST', '/v1/knowledge/search', { key, body: { query: 'Who was Ada Lovelace?', kb: 'history', k: 1 } });
    expect(vector.body.hits.map((h: { document_id: string }) => h.document_id)).to.deep.equal([ada.id]);
    const graph = await call('POST', '/v1/knowledge/search', { key, body: { query: 'Who was Ada Lovelace?', kb: 'history', k: 1, mode: 'graph' } });
    const byVia = (via: string) => graph.body.hits.filter((h: { via: string }) => h.via === via).map((h: { document_id: string }) => h.document_id);
    expect(byVia('vector')).to.deep.equal([ada.id]);
    // Ada → Analytical Engine ← Charles Babbage: one hop from the hit's entities reaches Babbage's chunks.
    expect(byVia('graph')).to.have.members([designed.id, born.id]);
    const oneHopOnlyEngine = await call('POST', '/v1/knowledge/search', { key, body: { query: 'Who was Ada Lovelace?', kb: 'history', k: 1, mode: 'graph', hops: 2 } });
    expect(oneHopOnlyEngine.status).to.equal(200);
  });

  it('extracts the graph with the scripted model too, and notes (without failing) an extraction that breaks', async () => {
    const kept = { entities: [{ name: 'Otters', type: 'concept' }, { name: 'Kelp', type: 'concept' }], relations: [{ source: 'Otters', relation: 'shelter in', target: 'Kelp' }] };
    // What a document can talk a model into answering: a NUL (Postgres refuses it), a lone surrogate, and
    // names kilobytes long (past the btree index's entry). Left out; the rest of the graph is kept.
    const extraction = {
      entities: [...kept.entities, { name: 'Bad\u0000Name', type: 'concept' }, { name: 'x'.repeat(3000), type: 'concept' }, { name: 'Half \ud800', type: 'concept' }],
      relations: [...kept.relations, { source: 'Otters', relation: 'outlast', target: 'y'.repeat(3000) }, { source: 'Kelp\u0000', relation: 'feeds', target: 'Otters' }],
    };
    await call('POST', '/v1/knowledge', { key, body: { name: 'scripted-graph', graph: { model: 'scripted', script: [{ text: JSON.stringify(extraction) }] } } });
    const doc = await addText('scripted-graph', 'Otters', 'Sea otters wrap themselves in kelp to sleep.');
    expect(doc.error).to.equal(null);
    const { db } = testPlatform();
    const entities = await db.selectFrom('kb_entities').select(['name', 'type']).where('document_id', '=', doc.id).orderBy('name').execute();
    expect(entities).to.deep.equal([{ name: 'Kelp', type: 'concept' }, { name: 'Otters', type: 'concept' }]);
    const relations = await db.selectFrom('kb_relations').select(['source', 'relation', 'target']).where('document_id', '=', doc.id).execute();
    expect(relations).to.deep.equal(kept.relations);

    // More rows than one INSERT can carry (65,535 parameters, seven a row): written in batches.
    const many = { entities: [], relations: Array.from({ length: 10_000 }, (_, i) => ({ source: 'Otters', relation: 'eat', target: `urchin ${i}` })) };
    await call('PATCH', '/v1/knowledge/scripted-graph', { key, body: { graph: { model: 'scripted', script: [{ text: JSON.stringify(many) }] } } });
    const manyDoc = await addText('scripted-graph', 'Urchins', 'Otters eat urchins.');
    expect(manyDoc.error).to.equal(null);
    const stored = await db.selectFrom('kb_relations').select((eb) => eb.fn.countAll<string>().as('n')).where('document_id', '=', manyDoc.id).executeTakeFirstOrThrow();
    expect(Number(stored.n)).to.equal(10_000);

    // A script is checked when saved, as every other script is: a turn's text is a string.
    const badScript = await call('PATCH', '/v1/knowledge/scripted-graph', { key, body: { graph: { model: 'scripted', script: [{ text: 7 }] } } });
    expect(badScript.status).to.equal(400);
    expect(badScript.body.error.fields[0].field).to.match(/^body\.graph\.script/);

    // A model id that cannot work is refused when saved, not found out by every later upload.
    for (const model of ['nosuchprovider/model', 'openai', '0']) {
      const refused = await call('PATCH', '/v1/knowledge/scripted-graph', { key, body: { graph: { model } } });
      expect(refused.status, model).to.equal(400);
      expect(refused.body.error.fields[0].field).to.equal('body.graph.model');
      expect((await call('POST', '/v1/knowledge', { key, body: { name: `bad-${model}`.replace('/', '-'), graph: { model } } })).status, model).to.equal(400);
    }
    const patched = await call('PATCH', '/v1/knowledge/scripted-graph', { key, body: { graph: { model: 'scripted', script: [] } } }); // a turn past the script's end fails
    expect(patched.status).to.equal(200);
    const broken = await addText('scripted-graph', 'Broken', 'Otters again.');
    expect(broken.status).to.equal('ready');
    expect(broken.error).to.match(/^graph extraction failed/);
    expect(broken.chunk_count).to.equal(1);
  });

  it('answers knowledge_search inside runs', async () => {
    await call('POST', '/v1/knowledge', { key, body: { name: 'faq' } });
    await addText('faq', 'Refunds', 'Refunds are issued within 14 days of the return arriving at our warehouse.');
    const toolId = await createBuiltinTool(key, 'knowledge_search');
    const agentId = await publishAgent(key, 'support', scriptedGraph([
      { tool_calls: [{ tool: 'knowledge_search', arguments: { query: 'how long do refunds take?', kb: 'faq', k: 1 } }] },
      { text: 'Within 14 days.' },
    ], [toolId]));
    const response = await stream('POST', `/v1/agents/${agentId}/runs`, { key, body: { input: 'refund time?' } });
    const { steps } = (await call('GET', `/v1/runs/${response.frames[0]!.data.run_id}`, { key })).body;
    expect(steps[0].status).to.equal('completed');
    expect(steps[0].result.hits[0].content).to.include('14 days');
  });
});
