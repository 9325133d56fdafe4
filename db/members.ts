import type { Transaction } from 'kysely';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Database, MemberRole } from './schema.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** A workspace's members: memberships joined with their users' e-mail addresses. */

export interface Member {
  id: string;
  user_id: string;
  email: string;
  role: MemberRole;
  created_at: Date;
}

function selectMembers(reader: TenantScoped, tenantId: string) {
  return reader
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.id', 'memberships.user_id', 'users.email', 'memberships.role', 'memberships.created_at'])
    .where('memberships.tenant_id', '=', tenantId);
}

/**
 * Makes the user a member unless they already are (then their role stays): with `role`, or, when not
 * given, as the owner of a workspace that has no member yet and a plain member otherwise. Answers the
 * membership and whether it was made now. Runs as the workspace or, for the CLI, as the connecting role.
 */
export async function addMember(
  tx: Transaction<Database>,
  tenantId: string,
  userId: string,
  role?: MemberRole,
): Promise<{ id: string; role: MemberRole; created: boolean }> {
  const existing = await tx.selectFrom('memberships').select(['id', 'role']).where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  if (existing) return { ...existing, created: false };
  const anyone = await tx.selectFrom('memberships').select('id').where('tenant_id', '=', tenantId).limit(1).executeTakeFirst();
  const chosen = role ?? (anyone ? 'member' : 'owner');
  const inserted = await tx
    .insertInto('memberships')
    .values({ id: newId('mem'), tenant_id: tenantId, user_id: userId, role: chosen })
    .onConflict((oc) => oc.columns(['user_id', 'tenant_id']).doNothing())
    .returning(['id', 'role'])
    .executeTakeFirst();
  if (inserted) return { ...inserted, created: true };
  // Someone made the same membership in the meantime: theirs stands.
  const raced = await tx.selectFrom('memberships').select(['id', 'role']).where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return { ...raced, created: false };
}

const membersPage = preparedPage('memberships.id', (db, { tenantId }: { tenantId: string }) => selectMembers(db, tenantId));

export async function listMembersPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<Member>> {
  return membersPage(reader, { tenantId }, pageQuery);
}

/** The member, its row locked for the rest of the transaction (a change to it reads it this way). */
export async function lockMember(tx: TenantTx, tenantId: string, id: string): Promise<Member | undefined> {
  return selectMembers(tx, tenantId).where('memberships.id', '=', id).forUpdate('memberships').executeTakeFirst();
}

/** The user's role in the workspace, or undefined when they are not a member. */
export async function findMemberRole(reader: TenantScoped, tenantId: string, userId: string): Promise<MemberRole | undefined> {
  const row = await reader.selectFrom('memberships').select('role').where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  return row?.role;
}

export async function isMemberByEmail(tx: TenantTx, tenantId: string, email: string): Promise<boolean> {
  const row = await selectMembers(tx, tenantId).where('users.email', '=', email).executeTakeFirst();
  return row !== undefined;
}

/**
 * Locks the workspace's owners for the rest of the transaction and answers their membership ids. Every
 * change to a member's role or membership takes this lock first, so such changes run one after another:
 * two concurrent demotions of its last two owners cannot both pass the check, and an admin cannot act
 * on a member that an owner is making an owner at the same moment.
 */
export async function lockOwners(tx: TenantTx, tenantId: string): Promise<string[]> {
  const rows = await tx.selectFrom('memberships').select('id').where('tenant_id', '=', tenantId).where('role', '=', 'owner').orderBy('id').forUpdate().execute();
  return rows.map((row) => row.id);
}

export async function setMemberRole(tx: TenantTx, tenantId: string, id: string, role: MemberRole): Promise<void> {
  await tx.updateTable('memberships').set({ role }).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

export async function deleteMember(tx: TenantTx, tenantId: string, id: string): Promise<void> {
  await tx.deleteFrom('memberships').where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}
