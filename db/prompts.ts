import { findTenantRow } from './find-tenant-row.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findByName, findByRef } from './refs.js';
import type { Prompt, PromptVersion } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `prompts` table and its `prompt_versions`: a prompt names its current version; every edit is a new one. */

export interface PromptWithCurrent {
  prompt: Prompt;
  current: PromptVersion;
}

/** What an edit may change; a change of any of it is a new version. */
export type PromptContent = Pick<PromptVersion, 'template' | 'description' | 'model'>;

function selectPromptsWithCurrent(reader: TenantScoped) {
  return reader
    .selectFrom('prompts')
    .innerJoin('prompt_versions', (join) =>
      join.onRef('prompt_versions.prompt_id', '=', 'prompts.id').onRef('prompt_versions.version', '=', 'prompts.version'),
    )
    .selectAll('prompts')
    .select(['prompt_versions.id as version_id', 'prompt_versions.template', 'prompt_versions.description', 'prompt_versions.model', 'prompt_versions.created_at as version_created_at']);
}

type PromptWithCurrentRow = Prompt & PromptContent & { version_id: string; version_created_at: Date };

function withCurrent({ version_id, template, description, model, version_created_at, ...prompt }: PromptWithCurrentRow): PromptWithCurrent {
  return {
    prompt,
    current: { id: version_id, tenant_id: prompt.tenant_id, prompt_id: prompt.id, version: prompt.version, template, description, model, created_at: version_created_at },
  };
}

/** The prompt `ref` names (by id, else by name: db/refs.ts) with its current version, in one read. */
export async function findPrompt(reader: TenantScoped, tenantId: string, ref: string): Promise<PromptWithCurrent | undefined> {
  const row = await findByRef(selectPromptsWithCurrent(reader), 'prompts', tenantId, ref);
  return row && withCurrent(row);
}

/**
 * The same, with the prompt row locked (`select … for update`) until the transaction ends, so edits of
 * one prompt number their versions one after another.
 */
export async function lockPrompt(tx: TenantTx, tenantId: string, ref: string): Promise<PromptWithCurrent | undefined> {
  return withCurrentVersion(tx, tenantId, await findByRef(tx.selectFrom('prompts').selectAll().forUpdate(), 'prompts', tenantId, ref));
}

/** The same by name only: an upsert by name whose name is taken. */
export async function lockPromptByName(tx: TenantTx, tenantId: string, name: string): Promise<PromptWithCurrent | undefined> {
  return withCurrentVersion(tx, tenantId, await findByName(tx.selectFrom('prompts').selectAll().forUpdate(), 'prompts', tenantId, name));
}

async function withCurrentVersion(tx: TenantTx, tenantId: string, prompt: Prompt | undefined): Promise<PromptWithCurrent | undefined> {
  if (!prompt) return undefined;
  const current = await findPromptVersion(tx, tenantId, prompt.id, prompt.version);
  if (!current) throw new Error(`prompt ${prompt.id} has no row for its current version ${prompt.version}`);
  return { prompt, current };
}

/** By name only: what a graph node's `prompt` names. */
export async function findPromptByName(tx: TenantTx, tenantId: string, name: string): Promise<Prompt | undefined> {
  return tx.selectFrom('prompts').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
}

export async function findPromptVersion(reader: TenantScoped, tenantId: string, promptId: string, version: number): Promise<PromptVersion | undefined> {
  return findTenantRow(reader, 'prompt_versions', tenantId, { prompt_id: promptId, version });
}

const promptsPage = preparedPage('prompts.id', (db, { tenantId }: { tenantId: string }) => selectPromptsWithCurrent(db).where('prompts.tenant_id', '=', tenantId));

export async function listPromptsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<PromptWithCurrent>> {
  const { items, nextCursor } = await promptsPage(reader, { tenantId }, pageQuery);
  return { items: items.map(withCurrent), nextCursor };
}

/** Every version of the prompt, newest first. */
export async function listVersionsOfPrompt(reader: TenantScoped, tenantId: string, promptId: string): Promise<PromptVersion[]> {
  return reader.selectFrom('prompt_versions').selectAll().where('prompt_id', '=', promptId).where('tenant_id', '=', tenantId).orderBy('version', 'desc').execute();
}

/** Creates the prompt with `content` as version 1, unless the workspace has a prompt by this name (then undefined). */
export async function insertPromptIfNew(tx: TenantTx, tenantId: string, name: string, content: PromptContent): Promise<PromptWithCurrent | undefined> {
  const prompt = await tx
    .insertInto('prompts')
    .values({ id: newId('prm'), tenant_id: tenantId, name, version: 1 })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!prompt) return undefined;
  const current = await tx
    .insertInto('prompt_versions')
    .values({ id: newId('prv'), tenant_id: tenantId, prompt_id: prompt.id, version: 1, ...content })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { prompt, current };
}

/** Stores `content` as the prompt's next version, when it differs from the current one. Call it on a locked prompt (lockPrompt). */
export async function addPromptVersionIfChanged(tx: TenantTx, { prompt, current }: PromptWithCurrent, content: PromptContent): Promise<PromptWithCurrent> {
  if (content.template === current.template && content.description === current.description && content.model === current.model) {
    return { prompt, current };
  }
  const next = await tx
    .insertInto('prompt_versions')
    .values({ id: newId('prv'), tenant_id: prompt.tenant_id, prompt_id: prompt.id, version: prompt.version + 1, ...content })
    .returningAll()
    .executeTakeFirstOrThrow();
  const updated = await tx
    .updateTable('prompts')
    .set({ version: next.version, updated_at: new Date() })
    .where('id', '=', prompt.id)
    .where('tenant_id', '=', prompt.tenant_id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { prompt: updated, current: next };
}

export async function renamePrompt(tx: TenantTx, prompt: Prompt, name: string): Promise<Prompt> {
  return tx
    .updateTable('prompts')
    .set({ name, updated_at: new Date() })
    .where('id', '=', prompt.id)
    .where('tenant_id', '=', prompt.tenant_id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the prompt; its versions go with it (on delete cascade). */
export async function deletePromptById(tx: TenantTx, tenantId: string, promptId: string): Promise<void> {
  await tx.deleteFrom('prompts').where('id', '=', promptId).where('tenant_id', '=', tenantId).execute();
}
