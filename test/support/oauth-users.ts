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
