import type { CellResult } from '../../db/experiment-cells.js';
import type { NewExperimentEvent } from '../../db/experiment-events.js';
import type { ExperimentCell } from '../../db/schema.js';

/** What the experiment's event stream says about a cell: enough to update a progress view without a read. */

type CellIdentity = Pick<ExperimentCell, 'id' | 'case_id' | 'variant_index' | 'repeat'>;

function identity(cell: CellIdentity) {
  return { cell_id: cell.id, case_id: cell.case_id, variant_index: cell.variant_index, repeat: cell.repeat };
}

export function cellStartedEvent(cell: CellIdentity, runId: string): NewExperimentEvent {
  return { type: 'cell.started', dedupeKey: `cell.started:${cell.id}`, data: { ...identity(cell), run_id: runId } };
}

export function cellEndEvent(cell: CellIdentity & Pick<ExperimentCell, 'run_id'>, result: CellResult): NewExperimentEvent {
  const scores = Object.fromEntries(Object.entries(result.scores ?? {}).map(([name, score]) => [name, score.score]));
  return {
    type: result.status === 'completed' ? 'cell.completed' : 'cell.failed',
    dedupeKey: `cell.end:${cell.id}`,
    data: {
      ...identity(cell),
      run_id: cell.run_id,
      status: result.status,
      passed: result.passed,
      scores,
      latency_ms: result.latencyMs,
      cost_usd: result.costUsd,
      error: result.error,
    },
  };
}
