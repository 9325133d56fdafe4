import { findTenantRow } from './find-tenant-row.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import { findByName, findByRef } from './refs.js';
import type { Skill, SkillVersion } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** The `skills` table and its `skill_versions`: a skill names its current version; every edit is a new one. */

export interface SkillWithCurrent {
  skill: Skill;
  current: SkillVersion;
}

/** What an edit may change; a change of any of it is a new version. */
export type SkillContent = Pick<SkillVersion, 'description' | 'instructions' | 'tools'>;

function selectSkillsWithCurrent(reader: TenantScoped) {
  return reader
    .selectFrom('skills')
    .innerJoin('skill_versions', (join) => join.onRef('skill_versions.skill_id', '=', 'skills.id').onRef('skill_versions.version', '=', 'skills.version'))
    .selectAll('skills')
    .select([
      'skill_versions.id as version_id',
      'skill_versions.description',
      'skill_versions.instructions',
      'skill_versions.tools',
      'skill_versions.created_at as version_created_at',
    ]);
}

type SkillWithCurrentRow = Skill & SkillContent & { version_id: string; version_created_at: Date };

function withCurrent({ version_id, description, instructions, tools, version_created_at, ...skill }: SkillWithCurrentRow): SkillWithCurrent {
  return {
    skill,
    current: { id: version_id, tenant_id: skill.tenant_id, skill_id: skill.id, version: skill.version, description, instructions, tools, created_at: version_created_at },
  };
}

/** The skill `ref` names (by id, else by name: db/refs.ts) with its current version, in one read. */
export async function findSkill(reader: TenantScoped, tenantId: string, ref: string): Promise<SkillWithCurrent | undefined> {
  const row = await findByRef(selectSkillsWithCurrent(reader), 'skills', tenantId, ref);
  return row && withCurrent(row);
}

/** The same, with the skill row locked until the transaction ends, so edits of one skill number their versions one after another. */
export async function lockSkill(tx: TenantTx, tenantId: string, ref: string): Promise<SkillWithCurrent | undefined> {
  return withCurrentVersion(tx, tenantId, await findByRef(tx.selectFrom('skills').selectAll().forUpdate(), 'skills', tenantId, ref));
}

/** The same by name only: an upsert by name whose name is taken. */
export async function lockSkillByName(tx: TenantTx, tenantId: string, name: string): Promise<SkillWithCurrent | undefined> {
  return withCurrentVersion(tx, tenantId, await findByName(tx.selectFrom('skills').selectAll().forUpdate(), 'skills', tenantId, name));
}

async function withCurrentVersion(tx: TenantTx, tenantId: string, skill: Skill | undefined): Promise<SkillWithCurrent | undefined> {
  if (!skill) return undefined;
  const current = await findSkillVersion(tx, tenantId, skill.id, skill.version);
  if (!current) throw new Error(`skill ${skill.id} has no row for its current version ${skill.version}`);
  return { skill, current };
}

/** By name only: what a graph node's `skills` names. */
export async function findSkillByName(tx: TenantTx, tenantId: string, name: string): Promise<Skill | undefined> {
  return tx.selectFrom('skills').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
}

export async function findSkillVersion(reader: TenantScoped, tenantId: string, skillId: string, version: number): Promise<SkillVersion | undefined> {
  return findTenantRow(reader, 'skill_versions', tenantId, { skill_id: skillId, version });
}

const skillsPage = preparedPage('skills.id', (db, { tenantId }: { tenantId: string }) => selectSkillsWithCurrent(db).where('skills.tenant_id', '=', tenantId));

export async function listSkillsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<SkillWithCurrent>> {
  const { items, nextCursor } = await skillsPage(reader, { tenantId }, pageQuery);
  return { items: items.map(withCurrent), nextCursor };
}

/** Every version of the skill, newest first. */
export async function listVersionsOfSkill(reader: TenantScoped, tenantId: string, skillId: string): Promise<SkillVersion[]> {
  return reader.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('tenant_id', '=', tenantId).orderBy('version', 'desc').execute();
}

/** Creates the skill with `content` as version 1, unless the workspace has a skill by this name (then undefined). */
export async function insertSkillIfNew(tx: TenantTx, tenantId: string, name: string, content: SkillContent): Promise<SkillWithCurrent | undefined> {
  const skill = await tx
    .insertInto('skills')
    .values({ id: newId('skl'), tenant_id: tenantId, name, version: 1 })
    .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!skill) return undefined;
  const current = await tx
    .insertInto('skill_versions')
    .values({ id: newId('sklv'), tenant_id: tenantId, skill_id: skill.id, version: 1, ...storedContent(content) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { skill, current };
}

/** Stores `content` as the skill's next version, when it differs from the current one. Call it on a locked skill (lockSkill). */
export async function addSkillVersionIfChanged(tx: TenantTx, { skill, current }: SkillWithCurrent, content: SkillContent): Promise<SkillWithCurrent> {
  if (sameContent(current, content)) return { skill, current };
  const next = await tx
    .insertInto('skill_versions')
    .values({ id: newId('sklv'), tenant_id: skill.tenant_id, skill_id: skill.id, version: skill.version + 1, ...storedContent(content) })
    .returningAll()
    .executeTakeFirstOrThrow();
  const updated = await tx
    .updateTable('skills')
    .set({ version: next.version, updated_at: new Date() })
    .where('id', '=', skill.id)
    .where('tenant_id', '=', skill.tenant_id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { skill: updated, current: next };
}

function sameContent(a: SkillContent, b: SkillContent): boolean {
  return a.description === b.description && a.instructions === b.instructions && JSON.stringify(a.tools) === JSON.stringify(b.tools);
}

function storedContent(content: SkillContent) {
  return { description: content.description, instructions: content.instructions, tools: JSON.stringify(content.tools) };
}

export async function renameSkill(tx: TenantTx, skill: Skill, name: string): Promise<Skill> {
  return tx
    .updateTable('skills')
    .set({ name, updated_at: new Date() })
    .where('id', '=', skill.id)
    .where('tenant_id', '=', skill.tenant_id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the skill; its versions go with it (on delete cascade). Runs keep their record of the versions they used. */
export async function deleteSkillById(tx: TenantTx, tenantId: string, skillId: string): Promise<void> {
  await tx.deleteFrom('skills').where('id', '=', skillId).where('tenant_id', '=', tenantId).execute();
}
