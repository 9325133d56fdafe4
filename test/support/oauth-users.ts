import { randomBytes, scryptSync } from 'node:crypto';
import { upsertUser } from '../../api/oauth/users.js';
import { testPlatform } from './global.js';

export interface TestUser {
  userId: string;
  email: string;
  password: string;
}

/** A user with a password, member of the given workspaces, made the way the CLI makes one. */
export async function newOAuthUser(tenantIds: string[], name = 'user'): Promise<TestUser> {
  const email = `${name}-${Math.random().toString(36).slice(2, 10)}@example.test`;
  const password = `correct horse ${Math.random().toString(36).slice(2)}`;
  const { userId } = await upsertUser(testPlatform().db, { email, password, tenantIds });
  return { userId, email, password };
}

/** A hash as an earlier release stored it (scrypt N = 2^15, r = 8, p = 1): what the next sign-in remakes. */
export function legacyPasswordHash(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password.normalize('NFKC'), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  return ['scrypt', 2 ** 15, 8, 1, salt.toString('base64url'), hash.toString('base64url')].join('$');
}
