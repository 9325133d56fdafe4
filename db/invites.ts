import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Database, InvitesTable, MemberRole } from './schema.js';
import { randomSecret, sha256Hex } from './secrets.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** Invites to a workspace: single-use links whose token is stored as its SHA-256 only. */

export type Invite = Selectable<InvitesTable>;
export type InviteStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** What became of the invite at `now`. */
export function inviteStatus(invite: Pick<Invite, 'accepted_at' | 'revoked_at' | 'expires_at'>, now: Date): InviteStatus {
  if (invite.accepted_at) return 'accepted';
  if (invite.revoked_at) return 'revoked';
  return invite.expires_at.getTime() <= now.getTime() ? 'expired' : 'pending';
}

/** `inviteStatus(invite, now) === 'pending'`, as a condition of an update (which then acts on pending invites only). */
function pendingAt(now: Date) {
  return (eb: ExpressionBuilder<Database, 'invites'>) => eb.and([eb('accepted_at', 'is', null), eb('revoked_at', 'is', null), eb('expires_at', '>', now)]);
}

/** The shape of an invite token: 43 base62 characters (256 bits). */
export const INVITE_TOKEN_PATTERN = /^[A-Za-z0-9]{43}$/;

/**
 * Revokes the address's pending invites (an address invited again gets a fresh link: only the newest one
 * works) and answers their roles, so the caller can refuse the replacement, rolling this back.
 */
export async function revokePendingInvitesTo(tx: TenantTx, tenantId: string, email: string, now: Date): Promise<MemberRole[]> {
  const revoked = await tx
    .updateTable('invites')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('email', '=', email)
    .where(pendingAt(now))
    .returning('role')
    .execute();
  return revoked.map((row) => row.role);
}

/** Stores a new invite and answers it with its token, shown only this once. */
export async function insertInvite(
  tx: TenantTx,
  tenantId: string,
  input: { email: string; role: MemberRole; expiresAt: Date },
): Promise<{ invite: Invite; token: string }> {
  const token = randomSecret();
  const invite = await tx
    .insertInto('invites')
    .values({
      id: newId('inv'),
      tenant_id: tenantId,
      email: input.email,
      role: input.role,
      token_hash: sha256Hex(token),
      expires_at: input.expiresAt,
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { invite, token };
}

const invitesPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('invites').selectAll().where('tenant_id', '=', tenantId));

export async function listInvitesPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<Invite>> {
  return invitesPage(reader, { tenantId }, pageQuery);
}

export async function findInvite(tx: TenantTx, tenantId: string, id: string): Promise<Invite | undefined> {
  return tx.selectFrom('invites').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** Revokes the invite if it is still pending; answers whether it was. */
export async function revokeInvite(tx: TenantTx, tenantId: string, id: string, now: Date): Promise<boolean> {
  const revoked = await tx
    .updateTable('invites')
    .set({ revoked_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where(pendingAt(now))
    .returning('id')
    .executeTakeFirst();
  return revoked !== undefined;
}

/**
 * The invite this link's token stands for, with its workspace's name. Like the API-key lookup it runs
 * before any tenant is known, as the connecting role.
 */
export async function findInviteByToken(db: Db, token: string): Promise<(Invite & { tenant_name: string }) | undefined> {
  if (!INVITE_TOKEN_PATTERN.test(token)) return undefined;
  return db
    .selectFrom('invites')
    .innerJoin('tenants', 'tenants.id', 'invites.tenant_id')
    .selectAll('invites')
    .select('tenants.name as tenant_name')
    .where('invites.token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
}

/**
 * Uses the invite up: true when it was still pending (so this caller, and no other, may act on it).
 * The conditional update is the single-use guarantee: two concurrent acceptances cannot both see a row.
 */
export async function markInviteAccepted(tx: TenantTx, tenantId: string, id: string, userId: string, now: Date): Promise<boolean> {
  const used = await tx
    .updateTable('invites')
    .set({ accepted_at: now, accepted_by: userId })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where(pendingAt(now))
    .returning('id')
    .executeTakeFirst();
  return used !== undefined;
}
