import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { checkIntegerSettings, INTEGER_SETTINGS, integerSetting, type IntegerSettingName } from '../db/integer-settings.js';

const run = promisify(execFile);

describe('integer settings from the environment', () => {
  it('answers undefined when unset or empty (the caller’s default), and an integer within the bounds', () => {
    expect(integerSetting('RUN_HISTORY_ARCHIVER_CHECK_MS', {})).to.equal(undefined);
    expect(integerSetting('RUN_HISTORY_ARCHIVER_CHECK_MS', { RUN_HISTORY_ARCHIVER_CHECK_MS: '' })).to.equal(undefined);
    expect(integerSetting('RUN_HISTORY_ARCHIVER_CHECK_MS', { RUN_HISTORY_ARCHIVER_CHECK_MS: '100' })).to.equal(100);
    expect(integerSetting('PORT', { PORT: ' 0 ' })).to.equal(0);
    expect(integerSetting('EMBEDDING_THREADS', { EMBEDDING_THREADS: '64' })).to.equal(64);
  });

  it('refuses anything else, naming the setting and what it accepts', () => {
    for (const bad of ['99', 'soon', '1e3', '1e9.5', '150.5', '0x100', '100ms', '9'.repeat(20)]) {
      expect(() => integerSetting('RUN_HISTORY_ARCHIVER_CHECK_MS', { RUN_HISTORY_ARCHIVER_CHECK_MS: bad })).to.throw(
        `RUN_HISTORY_ARCHIVER_CHECK_MS must be an integer of at least 100, not '${bad}'`,
      );
    }
    expect(() => integerSetting('WORKER_MAX_CONCURRENT_ACTIVITIES', { WORKER_MAX_CONCURRENT_ACTIVITIES: '0' })).to.throw(
      "WORKER_MAX_CONCURRENT_ACTIVITIES must be a positive integer, not '0'",
    );
    expect(() => integerSetting('PORT', { PORT: '65536' })).to.throw("PORT must be an integer from 0 to 65535, not '65536'");
    expect(() => integerSetting('EMBEDDING_THREADS', { EMBEDDING_THREADS: '-1' })).to.throw("EMBEDDING_THREADS must be an integer from 1 to 64, not '-1'");
  });

  it('checks every setting at once, so the first bad one stops a start', () => {
    expect(() => checkIntegerSettings({ PORT: '8080', WEBHOOK_RETRY_MAX_MS: '2h' })).to.throw("WEBHOOK_RETRY_MAX_MS must be a positive integer, not '2h'");
    expect(() => checkIntegerSettings({ PORT: '8080', SSE_PING_INTERVAL_MS: '500' })).to.not.throw();
    for (const name of Object.keys(INTEGER_SETTINGS) as IntegerSettingName[]) {
      expect(() => checkIntegerSettings({ [name]: 'x' }), name).to.throw(`${name} must be`);
    }
  });

  it('documents every setting in the README’s configuration table', () => {
    const tableRows = fs.readFileSync('README.md', 'utf8').split('\n').filter((line) => line.startsWith('| `'));
    for (const name of Object.keys(INTEGER_SETTINGS)) {
      expect(tableRows.some((row) => row.split('|')[1]!.includes(`\`${name}\``)), name).to.equal(true);
    }
  });

  // Each of these is read only later (per stream, per webhook attempt, when the browser tool runs), yet
  // the process refuses to start.
  for (const [script, label, setting] of [
    ['dist/api/server.js', 'api', 'SSE_PING_INTERVAL_MS'],
    ['dist/workers/main.js', 'worker', 'WEBHOOK_ATTEMPT_TIMEOUT_MS'],
    ['dist/workers/dev.js', 'platform', 'BROWSER_MAX_CONCURRENT'],
  ] as const) {
    it(`${script} exits at start on a bad ${setting}, naming it`, async () => {
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, [setting]: 'soon' };
      const failed = await run(process.execPath, [path.resolve(script)], { env, timeout: 20_000 }).then(
        () => expect.fail('the process started'),
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed.code).to.equal(1);
      expect(failed.stderr).to.include(`[${label}] failed to start: ${setting} must be`);
      expect(failed.stderr).to.include(`not 'soon'`);
    });
  }
});
