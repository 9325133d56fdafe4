import { findInvite, insertInvite, inviteStatus, listInvitesPage, revokeInvite, revokePendingInvitesTo, type Invite } from '../../db/invites.js';
import { isMemberByEmail } from '../../db/members.js';
import type { MemberRole } from '../../db/schema.js';
import { ApiError, invalidRequest, orNotFound } from '../errors.js';
import { MANAGERS_ONLY, requireMemberManager, requireOwnerFor } from '../member-access.js';
import { oauthClock } from '../oauth/clock.js';
import { normalizeEmail, UserInputError } from '../oauth/users.js';
import { defineListOperation } from '../list-operation.js';
import { defineOperation } from '../operation.js';
import { closedObject, deletionResult, nullableTimestamp, refParams, timestamp } from '../schemas.js';
import { memberRoleSchema } from './members.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'Members';
export const INVITE_DEFAULT_DAYS = 7;
const INVITE_MAX_DAYS = 30;

const inviteSchema = closedObject({
  id: { type: 'string' },
  email: { type: 'string' },
  role: memberRoleSchema,
  status: { enum: ['pending', 'accepted', 'revoked', 'expired'] },
  created_at: timestamp,
  expires_at: timestamp,
  accepted_at: nullableTimestamp,
  revoked_at: nullableTimestamp,
});

function inviteJson(invite: Invite, now: Date) {
  return {
    id: invite.id,
    email: invite.email,
    role: invite.role,
    status: inviteStatus(invite, now),
    created_at: isoTimestamp(invite.created_at),
    expires_at: isoTimestamp(invite.expires_at),
    accepted_at: isoTimestampOrNull(invite.accepted_at),
    revoked_at: isoTimestampOrNull(invite.revoked_at),
  };
}

/** The address of an invite's page: where the person opens the link. */
export function inviteUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/invites/${token}`;
}

function invitedEmail(email: string): string {
  try {
    return normalizeEmail(email);
  } catch (err) {
    if (err instanceof UserInputError) throw invalidRequest(err.message, [{ field: 'body.email', message: err.message }]);
    throw err;
  }
}

export const listInvites = defineListOperation({
  operationId: 'listInvites',
  path: '/v1/invites',
  tag: TAG,
  summary: "List the workspace's invites, oldest first, with what became of each (pending, accepted, revoked, expired)",
  description: MANAGERS_ONLY,
  errors: ['forbidden'],
  authorize: requireMemberManager,
  plural: 'invites',
  pageDescription: 'A page of invites',
  itemSchema: inviteSchema,
  page: listInvitesPage,
  toJson: (invite) => inviteJson(invite, oauthClock.now()),
});

export const createInvite = defineOperation<Record<string, never>, unknown, { email: string; role?: MemberRole; expires_in_days?: number }>({
  operationId: 'createInvite',
  method: 'post',
  path: '/v1/invites',
  tag: TAG,
  summary:
    'Invite someone by e-mail address; the single-use link (`url`) is in this response only. Whoever opens it signs in or creates an account with that address and joins with the role. Inviting an address again revokes its pending invite',
  description: `${MANAGERS_ONLY} Only owners invite owners, or replace an address's pending owner invite (403). An address that is already a member gets 409.`,
  access: 'key',
  body: closedObject(
    {
      // Printable ASCII without spaces, one '@': what the sign-in page accepts, in any regex dialect.
      email: { type: 'string', maxLength: 254, pattern: '^[!-?A-~]+@[!-?A-~]+$' },
      role: { ...memberRoleSchema, default: 'member' },
      expires_in_days: { type: 'integer', minimum: 1, maximum: INVITE_MAX_DAYS, default: INVITE_DEFAULT_DAYS },
    },
    { required: ['email'] },
  ),
  errors: ['invalid_request', 'forbidden', 'conflict'],
  responses: {
    201: {
      description: 'The invite, and its link',
      schema: closedObject({ invite: inviteSchema, url: { type: 'string', description: 'The link to send to the person: `{PUBLIC_URL}/invites/{token}`.' } }),
    },
  },
  handler: async ({ body, caller, tenant, deps }) => {
    const email = invitedEmail(body.email);
    const role = body.role ?? 'member';
    const now = oauthClock.now();
    const { invite, token } = await tenant(async (tx) => {
      const manager = await requireMemberManager(tx, caller);
      if (role === 'owner') requireOwnerFor(manager, 'invite an owner');
      if (await isMemberByEmail(tx, caller.tenantId, email)) throw new ApiError('conflict', `${email} is already a member of this workspace`);
      const expiresAt = new Date(now.getTime() + (body.expires_in_days ?? INVITE_DEFAULT_DAYS) * 24 * 60 * 60 * 1000);
      const replaced = await revokePendingInvitesTo(tx, caller.tenantId, email, now);
      if (replaced.includes('owner')) requireOwnerFor(manager, "replace an owner's invite");
      return insertInvite(tx, caller.tenantId, { email, role, expiresAt });
    });
    return { status: 201, body: { invite: inviteJson(invite, now), url: inviteUrl(deps.publicUrl, token) } };
  },
});

export const revokeInviteOperation = defineOperation<{ id: string }>({
  operationId: 'revokeInvite',
  method: 'delete',
  path: '/v1/invites/{id}',
  tag: TAG,
  summary: 'Revoke a pending invite: its link shows that it was revoked from now on. An invite already accepted, revoked or expired answers 409',
  description: `${MANAGERS_ONLY} Only owners revoke an owner's invite (403).`,
  access: 'key',
  params: refParams,
  errors: ['forbidden', 'not_found', 'conflict'],
  responses: { 200: { description: 'Revoked', schema: deletionResult } },
  handler: async ({ params, caller, tenant }) => {
    const now = oauthClock.now();
    const id = await tenant(async (tx) => {
      const manager = await requireMemberManager(tx, caller);
      const invite = orNotFound(await findInvite(tx, caller.tenantId, params.id), 'invite', params.id);
      if (invite.role === 'owner') requireOwnerFor(manager, "revoke an owner's invite");
      if (!(await revokeInvite(tx, caller.tenantId, invite.id, now))) {
        throw new ApiError('conflict', `invite '${invite.id}' is ${inviteStatus(invite, now)}, not pending`);
      }
      return invite.id;
    });
    return { status: 200, body: { deleted: true, id } };
  },
});

export default [listInvites, createInvite, revokeInviteOperation];
