import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findByRef } from './refs.js';
import { saveByName } from './save-by-name.js';
import type { GuardrailRow } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `guardrails` table: the checks every run of the workspace enforces. */

export interface GuardrailDefinition {
  kind: string;
  target: GuardrailRow['target'];
  action: GuardrailRow['action'];
  enabled: boolean;
  description: string | null;
  config: Record<string, unknown>;
}

/** The guardrail `ref` names: by id, else by name (db/refs.ts). */
export async function findGuardrail(tx: TenantTx, tenantId: string, ref: string): Promise<GuardrailRow | undefined> {
  return findByRef(tx.selectFrom('guardrails').selectAll(), 'guardrails', tenantId, ref);
}

const guardrailsPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('guardrails').selectAll().where('tenant_id', '=', tenantId));

export async function listGuardrailsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<GuardrailRow>> {
  return guardrailsPage(reader, { tenantId }, pageQuery);
}

/** Every guardrail of the workspace, enabled or not, oldest first. */
export async function listAllGuardrails(tx: TenantTx, tenantId: string): Promise<GuardrailRow[]> {
  return tx.selectFrom('guardrails').selectAll().where('tenant_id', '=', tenantId).orderBy('id').execute();
}

/** Creates the guardrail, or replaces the definition of the one with this name. */
export async function saveGuardrail(tx: TenantTx, tenantId: string, name: string, definition: GuardrailDefinition): Promise<{ row: GuardrailRow; created: boolean }> {
  return saveByName(tx, 'guardrails', tenantId, name, newId('grd'), { ...definition, config: JSON.stringify(definition.config) });
}

export async function setGuardrailEnabledById(tx: TenantTx, tenantId: string, guardrailId: string, enabled: boolean): Promise<GuardrailRow> {
  return tx
    .updateTable('guardrails')
    .set({ enabled, updated_at: new Date() })
    .where('id', '=', guardrailId)
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteGuardrailById(tx: TenantTx, tenantId: string, guardrailId: string): Promise<void> {
  await tx.deleteFrom('guardrails').where('id', '=', guardrailId).where('tenant_id', '=', tenantId).execute();
}
