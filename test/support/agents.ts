import { expect } from 'chai';
import { call } from './api.js';

/** Creates a tool in the catalog (or finds the one with its name, unchanged) and answers its id. */
export async function createTool(key: string, tool: Record<string, unknown>): Promise<string> {
  const response = await call('POST', '/v1/tools', { key, body: tool });
  expect(response.status, JSON.stringify(response.body)).to.be.oneOf([200, 201]);
  return response.body.tool.id;
}

/** Adds the built-in tool `builtin` to the catalog under its own name and answers the tool's id. */
export async function createBuiltinTool(key: string, builtin: string): Promise<string> {
  return createTool(key, { name: builtin, kind: 'builtin', builtin });
}

/** Creates an agent with `graph` published and answers its id. */
export async function publishAgent(key: string, name: string, graph: Record<string, unknown>): Promise<string> {
  const agent = await call('POST', '/v1/agents', { key, body: { name } });
  const version = await call('POST', `/v1/agents/${agent.body.agent.id}/versions`, { key, body: { graph } });
  expect(version.status, JSON.stringify(version.body)).to.equal(201);
  return agent.body.agent.id;
}

/** A one-node graph running the scripted model. */
export function scriptedGraph(script: unknown[], toolRefs: string[] = [], extra: Record<string, unknown> = {}) {
  return { nodes: [{ id: 'main', model: 'scripted', toolRefs, script, ...extra }] };
}
