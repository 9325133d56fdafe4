import { expect } from 'chai';
import { call, newTenant, type TestTenant } from './api.js';

/**
 * Two new workspaces, `a` and `b`, each with agents of the given names made through the API: what the
 * tests of tenant scoping (reads, statements, prepared queries) look for each other's rows among.
 */
export async function tenantsWithAgents(
  prefix: string,
  names: { a: string[]; b: string[] },
  description: (name: string) => string | undefined = () => undefined,
): Promise<{ a: TestTenant; b: TestTenant }> {
  const a = await newTenant(`${prefix}-a`);
  const b = await newTenant(`${prefix}-b`);
  for (const [tenant, agents] of [[a, names.a], [b, names.b]] as const) {
    for (const name of agents) {
      const created = await call('POST', '/v1/agents', { key: tenant.key, body: { name, description: description(name) } });
      expect(created.status).to.equal(201);
    }
  }
  return { a, b };
}
