import { findMemberRole } from '../db/members.js';
import type { TenantScoped } from '../db/tenant-transaction.js';
import { ApiError } from './errors.js';
import type { Caller } from './operation.js';

/**
 * Who may manage a workspace's members and invites: a management key, or a person signed in through
 * OAuth who is one of its owners or admins. A management key counts as an owner (it is the workspace's
 * root credential); a standard key is nobody in particular and may not. The role is read in the
 * operation's own transaction, so a demotion committed before the request is already in force.
 */
export type ManagerRole = 'owner' | 'admin';

/** Who may call the members and invites operations, as their descriptions say. */
export const MANAGERS_ONLY = 'Owners and admins (an OAuth sign-in) or management keys only; other credentials get 403.';

export async function requireMemberManager(reader: TenantScoped, caller: Caller): Promise<ManagerRole> {
  if (caller.kind === 'management') return 'owner';
  if (!caller.userId) throw new ApiError('forbidden', "members and invites are managed with a management key or by a workspace owner's or admin's sign-in");
  const role = await findMemberRole(reader, caller.tenantId, caller.userId);
  if (role === 'owner' || role === 'admin') return role;
  throw new ApiError('forbidden', "only the workspace's owners and admins manage members and invites");
}

/** An admin may not make anyone an owner, nor change or remove an owner: only owners touch owners. */
export function requireOwnerFor(manager: ManagerRole, what: string): void {
  if (manager !== 'owner') throw new ApiError('forbidden', `only an owner may ${what}`);
}
