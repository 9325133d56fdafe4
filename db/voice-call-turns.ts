import { newId } from './ids.js';
import type { VoiceCallTurn } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `voice_call_turns` table: a call's caller turns, each with the run it started; the agent's turns are those runs' outputs. */

export async function insertCallTurn(tx: TenantTx, tenantId: string, callId: string, turn: { text: string; confidence: number | null; runId: string }): Promise<VoiceCallTurn> {
  return tx
    .insertInto('voice_call_turns')
    .values({ id: newId('turn'), tenant_id: tenantId, call_id: callId, text: turn.text, confidence: turn.confidence, run_id: turn.runId })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The call's caller turns, in order. */
export async function listCallTurns(reader: TenantScoped, tenantId: string, callId: string): Promise<VoiceCallTurn[]> {
  return reader.selectFrom('voice_call_turns').selectAll().where('tenant_id', '=', tenantId).where('call_id', '=', callId).orderBy('id').execute();
}
