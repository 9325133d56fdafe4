import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { findTemporalCli } from '../workers/temporal-cli.js';
import { loadTemporalDevConfig, startDevArgs } from '../workers/temporal-dev-server.js';

describe('Temporal dev server configuration', () => {
  it('turns temporal-dev.yaml into start-dev flags, with the environment overriding ports', () => {
    const config = loadTemporalDevConfig({ TEMPORAL_DEV_PORT: '17000', TEMPORAL_DEV_UI_PORT: '18000' });
    const args = startDevArgs(config, '/data');
    const flag = (name: string) => args.filter((_, i) => args[i - 1] === name);
    expect(args.slice(0, 2)).to.deep.equal(['server', 'start-dev']);
    expect(flag('--port')).to.deep.equal(['17000']);
    expect(flag('--ui-port')).to.deep.equal(['18000']);
    expect(flag('--db-filename')).to.deep.equal(['/data/temporal.sqlite']);
    expect(flag('--search-attribute')).to.have.members(['TenantId=Keyword', 'AgentId=Keyword', 'RunSource=Keyword', 'ExperimentId=Keyword']);
    expect(flag('--dynamic-config-value')).to.include('frontend.enableUpdateWorkflowExecution=true');
    expect(startDevArgs({ ...config, db_file: null }, '/data')).to.not.include('--db-filename');
  });

  describe('finding the CLI', () => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-cli-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    function fakeBinary(at: string): string {
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, '#!/bin/sh\n', { mode: 0o755 });
      return at;
    }

    it('takes TEMPORAL_CLI_PATH first, and says how to get the CLI when that path is wrong', async () => {
      const chosen = fakeBinary(path.join(dir, 'chosen', 'temporal'));
      fakeBinary(path.join(dir, 'path', 'temporal'));
      expect(await findTemporalCli({ TEMPORAL_CLI_PATH: chosen, PATH: path.join(dir, 'path') })).to.equal(chosen);
      const error = await findTemporalCli({ TEMPORAL_CLI_PATH: path.join(dir, 'missing') }).catch((err: Error) => err);
      expect(String(error)).to.include('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
    });

    it('then PATH, then the cache', async () => {
      const onPath = fakeBinary(path.join(dir, 'path', 'temporal'));
      const cached = fakeBinary(path.join(dir, 'cache', 'agent-platform', 'bin', 'temporal'));
      expect(await findTemporalCli({ PATH: path.join(dir, 'path'), XDG_CACHE_HOME: path.join(dir, 'cache') })).to.equal(onPath);
      expect(await findTemporalCli({ PATH: path.join(dir, 'empty'), XDG_CACHE_HOME: path.join(dir, 'cache') })).to.equal(cached);
    });

    it('answers undefined when there is no CLI and no Go to build one', async () => {
      expect(await findTemporalCli({ PATH: path.join(dir, 'empty'), XDG_CACHE_HOME: path.join(dir, 'cache') })).to.equal(undefined);
    });
  });
});
