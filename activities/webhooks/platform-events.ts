import type { Client } from '@temporalio/client';
import type { Db } from '../../db/database.js';
import { countCellsByStatus } from '../../db/experiment-cells.js';
import { findExperiment } from '../../db/experiments.js';
import { findRun } from '../../db/runs.js';
import type { Run } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { emitWebhookEvent } from './emit.js';

/**
 * The platform's events as webhooks see them, each emitted after the bookkeeping that records it has
 * committed (activities/runs/activities.ts, activities/evals/activities.ts).
 */

interface Emitter {
  db: Db;
  temporal: Client;
}

function runData(run: Run): Record<string, unknown> {
  return {
    run_id: run.id,
    agent_id: run.agent_id,
    agent_version: run.version,
    thread_id: run.thread_id,
    source: run.source,
    status: run.status,
    parent_run_id: run.parent_run_id,
  };
}

/** An eval's cell runs are reported by their experiment's event, not one by one. */
async function reportableRun(tx: TenantTx, tenantId: string, runId: string): Promise<Run | undefined> {
  const run = await findRun(tx, tenantId, runId);
  return run && run.experiment_id === null ? run : undefined;
}

/**
 * `run.paused`: the agent asked a person (`ask_human`); the data carries the question and how to answer it.
 * Sent for top-level runs only: a subagent's question pauses every run up its chain, and the top one
 * reports it once, under a question id that names the path to the asking subagent.
 */
export async function emitRunPaused({ db, temporal }: Emitter, ref: { tenantId: string; runId: string; questionId: string; question: string }): Promise<void> {
  await emitWebhookEvent(db, temporal, ref.tenantId, {
    type: 'run.paused',
    dedupeKey: `run:${ref.runId}:paused:${ref.questionId}`,
    data: async (tx) => {
      const run = await reportableRun(tx, ref.tenantId, ref.runId);
      if (!run || run.parent_run_id !== null) return null;
      return {
        ...runData(run),
        status: 'paused',
        question: { id: ref.questionId, question: ref.question },
        answer_with: `POST /v1/runs/${run.id}/answer`,
      };
    },
  });
}

/** `run.completed`, `run.failed` or `run.cancelled`, as the run's record says once it has ended. */
export async function emitRunEnded({ db, temporal }: Emitter, end: { tenantId: string; runId: string; status: 'completed' | 'failed' | 'cancelled' }): Promise<void> {
  await emitWebhookEvent(db, temporal, end.tenantId, {
    type: `run.${end.status}`,
    dedupeKey: `run:${end.runId}:end`,
    data: async (tx) => {
      const run = await reportableRun(tx, end.tenantId, end.runId);
      // A run that had already ended otherwise (the end is recorded once) is reported by that end's emission.
      if (!run || run.status !== end.status) return null;
      return {
        ...runData(run),
        output: run.output,
        error: run.error,
        usage: {
          prompt_tokens: run.prompt_tokens,
          completion_tokens: run.completion_tokens,
          total_tokens: run.total_tokens,
          cost_usd: run.cost_usd,
          duration_ms: run.duration_ms,
        },
        started_at: run.started_at?.toISOString() ?? null,
        ended_at: run.ended_at?.toISOString() ?? null,
      };
    },
  });
}

/** `experiment.completed` (or failed, cancelled), with its cell counts. */
export async function emitExperimentEnded(
  { db, temporal }: Emitter,
  end: { tenantId: string; experimentId: string; status: 'completed' | 'failed' | 'cancelled' },
): Promise<void> {
  await emitWebhookEvent(db, temporal, end.tenantId, {
    type: `experiment.${end.status}`,
    dedupeKey: `experiment:${end.experimentId}:end`,
    data: async (tx) => {
      const experiment = await findExperiment(tx, end.tenantId, end.experimentId);
      if (!experiment || experiment.status !== end.status) return null;
      const cells = (await countCellsByStatus(tx, end.tenantId, [experiment.id])).get(experiment.id) ?? null;
      return {
        experiment_id: experiment.id,
        name: experiment.name,
        agent_id: experiment.agent_id,
        suite_id: experiment.suite_id,
        suite_name: experiment.suite_name,
        status: experiment.status,
        error: experiment.error,
        cells,
        started_at: experiment.started_at?.toISOString() ?? null,
        ended_at: experiment.ended_at?.toISOString() ?? null,
      };
    },
  });
}
