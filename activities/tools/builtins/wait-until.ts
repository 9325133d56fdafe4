import { sleep } from '@temporalio/workflow';
import { objectSchema, type WorkflowBuiltinTool } from './definition.js';
import { waitMilliseconds } from './durations.js';

/** A durable timer: the run sleeps in Temporal, surviving restarts of every process. */
export const waitUntil: WorkflowBuiltinTool = {
  runsIn: 'workflow',
  description:
    'Wait durably until a moment ("until", ISO 8601 date-time) or for a duration ("duration", e.g. "30s", "5m", "2h", or ISO 8601 like "PT5M").',
  parameters: objectSchema({ until: { type: 'string' }, duration: { type: 'string' } }, []),
  async run(args) {
    const ms = waitMilliseconds(args, Date.now());
    await sleep(ms);
    return { waited_ms: ms };
  },
};
