import fs from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import type { LogEntry } from '@temporalio/worker';
import { NO_WORKFLOWS_WARNING, WorkerLogger } from '../workers/worker-logger.js';

describe("the workers' Temporal logger", () => {
  it('drops the warning about a worker without workflows, and passes everything else at its level', () => {
    const entries: LogEntry[] = [];
    const logger = new WorkerLogger('WARN', (entry) => entries.push(entry));
    logger.warn(NO_WORKFLOWS_WARNING, { sdkComponent: 'worker' });
    logger.warn('Activity failed', { attempt: 3 });
    logger.info('below the level');
    logger.error('Worker failed');
    expect(entries.map((entry) => [entry.level, entry.message])).to.deep.equal([
      ['WARN', 'Activity failed'],
      ['ERROR', 'Worker failed'],
    ]);
  });

  it('drops what the installed SDK says, word for word', () => {
    const sdkWorker = createRequire(import.meta.url).resolve('@temporalio/worker/lib/worker.js');
    expect(fs.readFileSync(sdkWorker, 'utf8')).to.include(`'${NO_WORKFLOWS_WARNING}'`);
  });
});
