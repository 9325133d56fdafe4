import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createEmbedder, embeddingModelsRoot, EMBEDDING_DTYPE, EMBEDDING_MODEL_ID, EMBEDDING_WEIGHTS_SHA256, EmbedderUnavailableError, missingModelFiles, modelFilesFor, onnxFileFor } from '../activities/embedding/index.js';
import { allowRemoteFromEnv, embeddingThreadsFromEnv } from '../activities/embedding/config.js';

const run = promisify(execFile);
const script = path.resolve('scripts/fetch-embedder-model.sh');

describe('embedding: configuration and the model fetch script', () => {
  it('finds the models root from EMBEDDING_MODEL_DIR, XDG_CACHE_HOME or HOME', () => {
    expect(embeddingModelsRoot({ EMBEDDING_MODEL_DIR: '/srv/models', HOME: '/home/u' })).to.equal('/srv/models');
    expect(embeddingModelsRoot({ XDG_CACHE_HOME: '/c', HOME: '/home/u' })).to.equal('/c/agent-platform/models');
    expect(embeddingModelsRoot({ HOME: '/home/u' })).to.equal('/home/u/.cache/agent-platform/models');
  });

  it('reads EMBEDDING_THREADS and EMBEDDING_ALLOW_REMOTE', () => {
    expect(embeddingThreadsFromEnv({})).to.equal(Math.min(2, os.availableParallelism()));
    expect(embeddingThreadsFromEnv({ EMBEDDING_THREADS: '2' })).to.equal(2);
    expect(() => embeddingThreadsFromEnv({ EMBEDDING_THREADS: '0' })).to.throw('EMBEDDING_THREADS');
    expect(() => embeddingThreadsFromEnv({ EMBEDDING_THREADS: 'many' })).to.throw('EMBEDDING_THREADS');
    expect(allowRemoteFromEnv({})).to.equal(false);
    expect(allowRemoteFromEnv({ EMBEDDING_ALLOW_REMOTE: 'true' })).to.equal(true);
    expect(allowRemoteFromEnv({ EMBEDDING_ALLOW_REMOTE: '1' })).to.equal(false);
  });

  it('names the files of each weight variant, and a pool of a variant not installed says which is missing', async () => {
    expect(modelFilesFor('q4')).to.include.members(['onnx/model_q4.onnx', 'onnx/model_q4.onnx_data', 'tokenizer.json']);
    expect(modelFilesFor('int8')).to.include('onnx/model_int8.onnx').and.not.include('onnx/model_int8.onnx_data');
    expect(modelFilesFor('fp32')).to.include.members(['onnx/model.onnx', 'onnx/model.onnx_data']);
    expect(modelFilesFor('q8')).to.include('onnx/model_quantized.onnx');
    const root = embeddingModelsRoot();
    expect(missingModelFiles(root, EMBEDDING_MODEL_ID, 'no-such-dtype')).to.deep.equal(['onnx/model_no-such-dtype.onnx']);
    const pool = createEmbedder({ dtype: 'no-such-dtype', allowRemote: false });
    try {
      expect(pool.dtype).to.equal('no-such-dtype');
      const error = await pool.embed(['a']).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).to.be.instanceOf(EmbedderUnavailableError).and.include({ reason: 'model_missing' });
      expect((error as Error).message).to.contain('(no-such-dtype)').and.contain('onnx/model_no-such-dtype.onnx');
    } finally {
      await pool.close();
    }
  });

  it("records the platform's weight file with the sha256 npm run fetch-model builds and checks", () => {
    expect(onnxFileFor(EMBEDDING_DTYPE)).to.equal('onnx/model_quantized.onnx');
    const checked = /\["model_quantized\.onnx"\]=([0-9a-f]{64})/.exec(fs.readFileSync(script, 'utf8'));
    expect(checked?.[1], 'the sha256 scripts/fetch-embedder-model.sh checks').to.equal(EMBEDDING_WEIGHTS_SHA256);
  });

  it('npm run fetch-model only verifies a model that is already installed', async function () {
    const root = embeddingModelsRoot();
    if (missingModelFiles(root).length) throw new Error(`run npm run fetch-model first (${root})`);
    const started = performance.now();
    const { stderr } = await run('bash', [script], { env: { ...process.env, EMBEDDING_MODEL_DIR: root } });
    expect(stderr).to.contain(`${EMBEDDING_MODEL_ID} is present and verified in ${root}`);
    expect(performance.now() - started).to.be.below(5000);
  });
});
