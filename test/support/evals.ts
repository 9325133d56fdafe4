import { expect } from 'chai';
import { call } from './api.js';

/** Creates (or updates) the agent's suite and answers it. */
export async function createSuite(key: string, agent: string, name: string, scorers: unknown[] = [], extra: Record<string, unknown> = {}) {
  const response = await call('POST', '/v1/evals/suites', { key, body: { agent, name, scorers, ...extra } });
  expect(response.status, JSON.stringify(response.body)).to.be.oneOf([200, 201]);
  return response.body.suite;
}

export async function addCases(key: string, suiteId: string, cases: unknown[]) {
  const response = await call('POST', `/v1/evals/suites/${suiteId}/cases`, { key, body: { cases } });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.cases as Array<{ id: string; input: string }>;
}

export async function startExperiment(key: string, body: Record<string, unknown>) {
  const response = await call('POST', '/v1/evals/experiments', { key, body });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.experiment;
}

/** Polls the experiment (with `query`) until `done` holds for its body; fails after `timeoutMs`. */
export async function pollExperiment(key: string, id: string, done: (body: any) => boolean, { query = '', timeoutMs = 60_000 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await call('GET', `/v1/evals/experiments/${id}${query}`, { key });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`experiment ${id} did not get there in ${timeoutMs} ms: ${JSON.stringify(response.body.experiment)}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

export const FINISHED = ['completed', 'cancelled', 'failed'];

/** Waits for the experiment to end, and answers its body with the results matrix. */
export function finishedExperiment(key: string, id: string, timeoutMs = 90_000) {
  return pollExperiment(key, id, (body) => FINISHED.includes(body.experiment.status), { query: '?results=true', timeoutMs });
}
