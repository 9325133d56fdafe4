import { deleteMember, listMembersPage, lockMember, lockOwners, setMemberRole, type Member } from '../../db/members.js';
import type { MemberRole } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { ApiError, orNotFound } from '../errors.js';
import { MANAGERS_ONLY, requireMemberManager, requireOwnerFor, type ManagerRole } from '../member-access.js';
import { revokeUserGrants } from '../oauth/grants.js';
import { defineListOperation } from '../list-operation.js';
import { defineOperation, type Caller } from '../operation.js';
import { closedObject, deletionResult, refParams, timestamp } from '../schemas.js';
import { isoTimestamp } from '../iso-timestamp.js';

const TAG = 'Members';

export const memberRoleSchema = { enum: ['owner', 'admin', 'member'] };

const memberSchema = closedObject({
  id: { type: 'string' },
  user_id: { type: 'string' },
  email: { type: 'string' },
  role: memberRoleSchema,
  created_at: timestamp,
});

function memberJson(member: Member) {
  return { id: member.id, user_id: member.user_id, email: member.email, role: member.role, created_at: isoTimestamp(member.created_at) };
}

/**
 * Starts a change to one member: takes the owners' lock first, then reads the caller's role and the
 * member (locked). Changes to members thus run one at a time, and as each statement of a read-committed
 * transaction sees what committed before it, the role checks after the lock see the roles as they are
 * now, not as they were when the request came in (an admin cannot demote someone made an owner meanwhile).
 */
async function lockForChange(tx: TenantTx, caller: Caller, id: string): Promise<{ manager: ManagerRole; member: Member }> {
  await lockOwners(tx, caller.tenantId);
  const manager = await requireMemberManager(tx, caller);
  const member = orNotFound(await lockMember(tx, caller.tenantId, id), 'member', id);
  return { manager, member };
}

/** Refuses (409) a change that would leave the workspace without an owner. Reads the owners afresh. */
async function keepAnOwner(tx: TenantTx, tenantId: string, member: Member, what: string): Promise<void> {
  if (member.role !== 'owner') return;
  const owners = await lockOwners(tx, tenantId);
  if (owners.length <= 1 && owners.includes(member.id)) {
    throw new ApiError('conflict', `${member.email} is the workspace's last owner and cannot be ${what}; make another member an owner first`);
  }
}

export const listMembers = defineListOperation({
  operationId: 'listMembers',
  path: '/v1/members',
  tag: TAG,
  summary: "List the workspace's members and their roles",
  description: MANAGERS_ONLY,
  errors: ['forbidden'],
  authorize: requireMemberManager,
  plural: 'members',
  pageDescription: 'A page of members',
  itemSchema: memberSchema,
  page: listMembersPage,
  toJson: memberJson,
});

export const updateMember = defineOperation<{ id: string }, unknown, { role: MemberRole }>({
  operationId: 'updateMember',
  method: 'patch',
  path: '/v1/members/{id}',
  tag: TAG,
  summary: "Change a member's role (owner, admin or member). The last owner cannot be demoted (409); only owners make owners or change an owner's role (403)",
  description: MANAGERS_ONLY,
  access: 'key',
  params: refParams,
  body: closedObject({ role: memberRoleSchema }),
  errors: ['forbidden', 'not_found', 'conflict'],
  responses: { 200: { description: 'The member', schema: closedObject({ member: memberSchema }) } },
  handler: async ({ params, body, caller, tenant }) => {
    const member = await tenant(async (tx) => {
      const { manager, member } = await lockForChange(tx, caller, params.id);
      if (member.role === body.role) return member;
      if (body.role === 'owner') requireOwnerFor(manager, 'make a member an owner');
      if (member.role === 'owner') {
        requireOwnerFor(manager, "change an owner's role");
        await keepAnOwner(tx, caller.tenantId, member, 'demoted');
      }
      await setMemberRole(tx, caller.tenantId, member.id, body.role);
      return { ...member, role: body.role };
    });
    return { status: 200, body: { member: memberJson(member) } };
  },
});

export const removeMember = defineOperation<{ id: string }>({
  operationId: 'removeMember',
  method: 'delete',
  path: '/v1/members/{id}',
  tag: TAG,
  summary:
    "Remove a member from the workspace; their OAuth authorizations for it are revoked at once (their access and refresh tokens stop working). The last owner cannot be removed (409); only owners remove owners (403)",
  description: MANAGERS_ONLY,
  access: 'key',
  params: refParams,
  errors: ['forbidden', 'not_found', 'conflict'],
  responses: { 200: { description: 'Removed', schema: deletionResult } },
  handler: async ({ params, caller, tenant }) => {
    const id = await tenant(async (tx) => {
      const { manager, member } = await lockForChange(tx, caller, params.id);
      if (member.role === 'owner') {
        requireOwnerFor(manager, 'remove an owner');
        await keepAnOwner(tx, caller.tenantId, member, 'removed');
      }
      await deleteMember(tx, caller.tenantId, member.id);
      await revokeUserGrants(tx, caller.tenantId, member.user_id, 'member_removed');
      return member.id;
    });
    return { status: 200, body: { deleted: true, id } };
  },
});

export default [listMembers, updateMember, removeMember];
