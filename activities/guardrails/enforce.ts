import type { ApplicationFailure } from '@temporalio/common';
import { agentRunFailure } from '../../workflows/agent-run-api.js';
import type { Db } from '../../db/database.js';
import { appendRunEvents } from '../../db/run-events.js';
import { appendGuardrailTrips } from '../../db/runs.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { listProviderNames } from '../../db/provider-connections.js';
import { workspaceModelSettings } from '../models/workspace-connections.js';
import { applyGuardrails, type Guardrail, type GuardrailOutcome, type GuardrailTrip } from './index.js';
import type { ModelTurnUsage, RunRef } from '../runs/types.js';

export interface GuardedText {
  text: string;
  /** The semantic guardrails' decision-model calls, which count toward the run's usage and cost. */
  turns: ModelTurnUsage[];
}

/**
 * Runs the guardrails that face `target` over `text` and records every trip on the run (its
 * `guardrail_trips` and a `guardrail.triggered` event). A block ends the run: it throws a non-retryable
 * `GuardrailBlocked` failure naming the guardrail, whose details carry the model usage the run would
 * otherwise lose: `spent` (the turn that produced the text) and the decision-model turns. `scope` names
 * the checked text (`input`, `turn:3`) so a retried activity records each trip once.
 */
export async function enforceGuardrails(
  db: Db,
  ref: RunRef,
  guardrails: Guardrail[],
  target: 'input' | 'output',
  text: string,
  scope: string,
  signal?: AbortSignal,
  spent: ModelTurnUsage[] = [],
): Promise<GuardedText> {
  // Only a semantic guardrail's decision model may name one of the workspace's provider connections.
  const workspaceProviders = guardrails.some((g) => g.kind === 'semantic') ? await withTenant(db, ref.tenantId, (tx) => listProviderNames(tx, ref.tenantId)) : undefined;
  const outcome = await applyGuardrails(guardrails, text, target, { signal, modelSettings: workspaceModelSettings(db, ref.tenantId), workspaceProviders });
  await recordTrips(db, ref, outcome.trips, scope);
  const turns = outcome.decisionModelCalls.map((call) => ({ model: call.model, usage: call.usage }));
  if (outcome.blocked) throw blockedFailure(outcome, [...spent, ...turns]);
  return { text: outcome.text, turns };
}

async function recordTrips(db: Db, ref: RunRef, trips: GuardrailTrip[], scope: string): Promise<void> {
  if (trips.length === 0) return;
  await withTenant(db, ref.tenantId, async (tx) => {
    const at = new Date().toISOString();
    const fresh = await appendRunEvents(
      tx,
      ref.tenantId,
      ref.runId,
      trips.map((trip, i) => ({
        type: 'guardrail.triggered',
        dedupeKey: `guardrail:${scope}:${i}`,
        data: { name: trip.name, kind: trip.kind, action: trip.action, target: trip.target, detail: trip.detail },
      })),
    );
    if (fresh.length === 0) return; // recorded by an earlier attempt
    const records = trips.map((trip) => ({ name: trip.name, kind: trip.kind, action: trip.action, target: trip.target, detail: trip.detail, at }));
    await appendGuardrailTrips(tx, ref.tenantId, ref.runId, records);
  });
}

function blockedFailure(outcome: GuardrailOutcome, turns: ModelTurnUsage[]): ApplicationFailure {
  const trip = outcome.blocked!;
  return agentRunFailure('GuardrailBlocked', `blocked by guardrail '${trip.name}' (${trip.kind}, ${trip.target}): ${trip.detail}`, [turns]);
}
