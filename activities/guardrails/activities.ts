import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps.js';
import type { RunRef } from '../runs/types.js';
import { enforceGuardrails } from './enforce.js';
import type { Guardrail } from './types.js';

/** The `agentRun` workflow's input check (output guardrails run inside the model turn: models/call-model.ts). */
export function guardrailActivities({ db }: ActivityDeps) {
  return {
    /** The run input after the input guardrails (redacted where they redact); throws when one blocks. */
    checkInput: (ref: RunRef & { text: string; guardrails: Guardrail[] }) =>
      enforceGuardrails(db, ref, ref.guardrails, 'input', ref.text, 'input', Context.current().cancellationSignal),
  };
}
