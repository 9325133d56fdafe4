import { MAX_SCORERS, scorerConfigSchemas } from '../../activities/evals/scorers/config-schemas.js';
import { SCORER_TYPES, type ScorerConfig } from '../../activities/evals/scorers/types.js';
import { expectedProblems, scorerConfigProblems } from '../../activities/evals/scorers/validate.js';
import { listProviderNames } from '../../db/provider-connections.js';
import { deleteCaseById, insertCases, listCasesPage, type NewCase } from '../../db/eval-cases.js';
import { deleteSuiteById, findSuitesByRef, listSuitesPage, saveSuite, findSuiteIdByName, updateSuite, type SuiteWithCount } from '../../db/eval-suites.js';
import type { EvalCase, StoredScorer } from '../../db/schema.js';
import type { TenantScoped } from '../../db/tenant-transaction.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { ApiError, invalidRequest, orNotFound, type FieldError } from '../errors.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, listOf, pageQuery, pathParams, refParams, timestamp, upsertResultOf } from '../schemas.js';
import { agentOr404 } from './agents.js';

const TAG = 'Evals';

/** Cases one POST may add. */
const MAX_CASES_PER_REQUEST = 1000;
/**
 * Distinct JSON Schemas the cases of one POST may bring in their own `json_schema` scorers. Each is
 * compiled to be checked, about 10 ms of the API's event loop (an Ajv of its own: activities/json-schema/cache.ts),
 * so 1,000 cases of 20 such scorers would hold it for minutes.
 */
const MAX_CASE_SCHEMAS_PER_REQUEST = 100;

const suiteName = nameSchema({ description: 'Unique per agent.' });
/**
 * Each scorer is held to its type's schema (the one the scorers' own validation uses); an unknown type
 * is a 400 listing the types.
 */
const scorerList: JsonSchema = {
  type: 'array',
  maxItems: MAX_SCORERS,
  items: {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: SCORER_TYPES } },
    allOf: SCORER_TYPES.map((type) => ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: scorerConfigSchemas[type] })),
  },
  description: 'Scorers (docs/evals.md): each `{"type", "name"?, "threshold"?, …its own fields}`. Names must be unique in a list.',
};

const suiteSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  agent_id: { type: 'string' },
  description: { type: ['string', 'null'] },
  scorers: { type: 'array', items: { type: 'object' }, description: "The default scorers of the suite's cases." },
  case_count: { type: 'integer' },
  created_at: timestamp,
  updated_at: timestamp,
});

const caseSchema = closedObject({
  id: { type: 'string' },
  suite_id: { type: 'string' },
  input: { type: 'string' },
  expected: { description: 'A string, a JSON object, or null.' },
  metadata: { type: 'object' },
  tags: { type: 'array', items: { type: 'string' } },
  scorers: { type: ['array', 'null'], items: { type: 'object' }, description: "This case's scorers instead of the suite's; null: the suite's." },
  created_at: timestamp,
  updated_at: timestamp,
});

const newCaseSchema = closedObject(
  {
    input: { type: 'string', minLength: 1, maxLength: 100_000 },
    expected: { anyOf: [{ type: 'string' }, { type: 'object' }, { type: 'null' }], description: 'A string, a JSON object, or null.' },
    metadata: { type: 'object' },
    tags: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 100 } },
    scorers: scorerList,
  },
  { required: ['input'] },
);

function suiteJson(suite: SuiteWithCount) {
  return { ...pick(suite, ['id', 'name', 'agent_id', 'description', 'scorers', 'case_count']), ...timestampsJson(suite) };
}

function caseJson(c: EvalCase) {
  return {
    ...pick(c, ['id', 'suite_id', 'input']),
    expected: c.expected ?? null,
    ...pick(c, ['metadata', 'tags', 'scorers']),
    ...timestampsJson(c),
  };
}

/** 400 with every problem of a scorer list, each naming its field. */
function assertScorers(scorers: unknown, field: string, workspaceProviders: ReadonlySet<string>): StoredScorer[] {
  const problems = scorerConfigProblems(scorers, field, workspaceProviders);
  if (problems.length > 0) throw invalidRequest(`invalid scorers: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  return scorers as StoredScorer[];
}

/**
 * The one suite `ref` names (an id, or a name; `agentRef` narrows a name to one agent's suites): 404
 * when none, 409 with `matching_ids` when the name is shared by several agents' suites.
 */
export async function suiteOr404(reader: TenantScoped, tenantId: string, ref: string, agentRef?: string): Promise<SuiteWithCount> {
  const agentId = agentRef === undefined ? undefined : (await agentOr404(reader, tenantId, agentRef)).id;
  const suites = await findSuitesByRef(reader, tenantId, ref, agentId);
  if (suites.length > 1) {
    throw new ApiError('conflict', `suite name '${ref}' is used by ${suites.length} agents' suites; address one by id, or add ?agent=`, {
      matching_ids: suites.map((s) => s.id),
    });
  }
  return orNotFound(suites[0], 'suite', ref);
}

const suiteRefQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { agent: { type: 'string', minLength: 1, description: 'The agent (id or name) whose suite a shared name means.' } },
};

/** The spec names the path parameter `ref`: a suite's id or name. */
const suiteParams = pathParams(['ref'], 200);

const suiteBody = closedObject({ suite: suiteSchema });

export const listSuites = defineOperation<Record<string, never>, { agent?: string; limit: number; cursor?: string }>({
  operationId: 'listEvalSuites',
  method: 'get',
  path: '/v1/evals/suites',
  tag: TAG,
  summary: 'Eval suites, oldest first; `agent` filters by agent (id or name)',
  access: 'key',
  query: { ...pageQuery, properties: { ...(pageQuery.properties as object), agent: { type: 'string', minLength: 1 } } },
  errors: ['not_found'],
  responses: { 200: { description: 'A page of suites', schema: listOf('suites', suiteSchema) } },
  handler: async ({ query, caller, tenantReads }) => {
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const agentId = query.agent === undefined ? undefined : (await agentOr404(reader, caller.tenantId, query.agent)).id;
      return listSuitesPage(reader, caller.tenantId, { agentId }, query);
    });
    return { status: 200, body: { suites: items.map(suiteJson), next_cursor: nextCursor } };
  },
});

export const upsertSuite = defineOperation<Record<string, never>, unknown, { agent: string; name: string; description?: string | null; scorers?: unknown[] }>({
  operationId: 'upsertEvalSuite',
  method: 'post',
  path: '/v1/evals/suites',
  tag: TAG,
  summary: "Create an agent's suite, or update the one it has with this name",
  description: 'Upsert by (agent, name): 201 when created, 200 when the agent already had a suite of this name (the fields given replace its own).',
  access: 'key',
  body: closedObject(
    {
      agent: { type: 'string', minLength: 1, description: 'The agent, by id or name.' },
      name: suiteName,
      description: { type: ['string', 'null'], maxLength: 10_000 },
      scorers: scorerList,
    },
    { required: ['agent', 'name'] },
  ),
  errors: ['not_found'],
  responses: {
    201: { description: 'Created', schema: upsertResultOf('suite', suiteSchema) },
    200: { description: 'The agent had a suite of this name; updated', schema: upsertResultOf('suite', suiteSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    const { suite, created } = await tenant(async (tx) => {
      const scorers = body.scorers === undefined ? undefined : assertScorers(body.scorers, 'body.scorers', await listProviderNames(tx, caller.tenantId));
      const agent = await agentOr404(tx, caller.tenantId, body.agent);
      return saveSuite(tx, caller.tenantId, agent.id, body.name, { description: body.description, scorers });
    });
    return { status: created ? 201 : 200, body: { suite: suiteJson(suite), created } };
  },
});

export const getSuite = defineOperation<{ ref: string }, { agent?: string }>({
  operationId: 'getEvalSuite',
  method: 'get',
  path: '/v1/evals/suites/{ref}',
  tag: TAG,
  summary: 'One suite, by id or name (409 with `matching_ids` when several agents have a suite of that name)',
  access: 'key',
  params: suiteParams,
  query: suiteRefQuery,
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The suite', schema: suiteBody } },
  handler: async ({ params, query, caller, tenantReads }) => {
    const suite = await tenantReads((reader) => suiteOr404(reader, caller.tenantId, params.ref, query.agent));
    return { status: 200, body: { suite: suiteJson(suite) } };
  },
});

export const updateSuiteOperation = defineOperation<{ ref: string }, { agent?: string }, { name?: string; description?: string | null; scorers?: unknown[] }>({
  operationId: 'updateEvalSuite',
  method: 'patch',
  path: '/v1/evals/suites/{ref}',
  tag: TAG,
  summary: "Rename a suite, or change its description or default scorers",
  access: 'key',
  params: suiteParams,
  query: suiteRefQuery,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { name: suiteName, description: { type: ['string', 'null'], maxLength: 10_000 }, scorers: scorerList },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The updated suite', schema: suiteBody } },
  handler: async ({ params, query, body, caller, tenant }) => {
    const nameTaken = `the agent already has a suite named '${body.name}'`;
    const suite = await conflictIfNameTaken(nameTaken, () =>
      tenant(async (tx) => {
        const scorers = body.scorers === undefined ? undefined : assertScorers(body.scorers, 'body.scorers', await listProviderNames(tx, caller.tenantId));
        const current = await suiteOr404(tx, caller.tenantId, params.ref, query.agent);
        const holder = body.name === undefined ? undefined : await findSuiteIdByName(tx, caller.tenantId, current.agent_id, body.name);
        if (holder !== undefined && holder !== current.id) throw new ApiError('conflict', nameTaken);
        return updateSuite(tx, caller.tenantId, current.id, { name: body.name, description: body.description, scorers });
      }),
    );
    return { status: 200, body: { suite: suiteJson(suite) } };
  },
});

export const deleteSuite = defineDeleteOperation<{ ref: string }, { agent?: string }>({
  operationId: 'deleteEvalSuite',
  path: '/v1/evals/suites/{ref}',
  tag: TAG,
  summary: 'Delete a suite with its cases; finished experiments keep their results',
  params: suiteParams,
  query: suiteRefQuery,
  errors: ['not_found', 'conflict'],
  find: (tx, tenantId, { ref }, { agent }) => suiteOr404(tx, tenantId, ref, agent),
  deleteById: deleteSuiteById,
});

export const listCases = defineOperation<{ ref: string }, { agent?: string; limit: number; cursor?: string }>({
  operationId: 'listEvalCases',
  method: 'get',
  path: '/v1/evals/suites/{ref}/cases',
  tag: TAG,
  summary: "A suite's cases, oldest first",
  access: 'key',
  params: suiteParams,
  query: { ...pageQuery, properties: { ...(pageQuery.properties as object), ...(suiteRefQuery.properties as object) } },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'A page of cases', schema: listOf('cases', caseSchema) } },
  handler: async ({ params, query, caller, tenantReads }) => {
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const suite = await suiteOr404(reader, caller.tenantId, params.ref, query.agent);
      return listCasesPage(reader, caller.tenantId, suite.id, query);
    });
    return { status: 200, body: { cases: items.map(caseJson), next_cursor: nextCursor } };
  },
});

type NewCaseBody = { input: string; expected?: unknown; metadata?: Record<string, unknown>; tags?: string[]; scorers?: unknown[] };

export const addCases = defineOperation<{ ref: string }, { agent?: string }, NewCaseBody | { cases: NewCaseBody[] }>({
  operationId: 'addEvalCases',
  method: 'post',
  path: '/v1/evals/suites/{ref}/cases',
  tag: TAG,
  summary: 'Add one case, or `{"cases": [...]}` (up to 1,000, all or nothing)',
  description: 'Every case is checked first (its scorers, and that the expected value suits the scorers that read it); one bad case adds none.',
  access: 'key',
  params: suiteParams,
  query: suiteRefQuery,
  body: {
    oneOf: [
      newCaseSchema,
      closedObject({ cases: { type: 'array', minItems: 1, maxItems: MAX_CASES_PER_REQUEST, items: newCaseSchema } }, { required: ['cases'] }),
    ],
  },
  errors: ['not_found', 'conflict'],
  responses: {
    201: {
      description: 'The cases added, in the order given',
      schema: closedObject({ cases: { type: 'array', items: caseSchema } }),
    },
  },
  handler: async ({ params, query, body, caller, tenant }) => {
    const batch = 'cases' in body;
    const given = batch ? body.cases : [body];
    checkCaseSchemaCount(given, batch ? 'body.cases' : 'body.scorers');
    const added = await tenant(async (tx) => {
      const suite = await suiteOr404(tx, caller.tenantId, params.ref, query.agent);
      const workspaceProviders = await listProviderNames(tx, caller.tenantId);
      const cases = given.map((c, index) => checkedCase(c, suite.scorers, batch ? `body.cases[${index}]` : 'body', workspaceProviders));
      return insertCases(tx, caller.tenantId, suite.id, cases);
    });
    return { status: 201, body: { cases: added.map(caseJson) } };
  },
});

function checkCaseSchemaCount(cases: NewCaseBody[], field: string): void {
  const schemas = new Set(
    cases.flatMap((c) => (c.scorers ?? []).filter((s) => (s as { type?: unknown }).type === 'json_schema').map((s) => JSON.stringify((s as { schema?: unknown }).schema))),
  );
  if (schemas.size > MAX_CASE_SCHEMAS_PER_REQUEST) {
    const message = `the cases' json_schema scorers bring ${schemas.size} distinct schemas; at most ${MAX_CASE_SCHEMAS_PER_REQUEST} are allowed in one request (add the cases in several)`;
    throw invalidRequest(`invalid body: ${field} ${message}`, [{ field, message }]);
  }
}

/** The case as stored, or a 400 naming what is wrong with it. */
function checkedCase(c: NewCaseBody, suiteScorers: StoredScorer[], path: string, workspaceProviders: ReadonlySet<string>): NewCase {
  const scorers = c.scorers === undefined ? null : assertScorers(c.scorers, `${path}.scorers`, workspaceProviders);
  const problems: FieldError[] = expectedProblems((scorers ?? suiteScorers) as ScorerConfig[], c.expected ?? null, `${path}.expected`);
  if (problems.length > 0) throw invalidRequest(`${path}: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  return { input: c.input, expected: c.expected ?? null, metadata: c.metadata ?? {}, tags: c.tags ?? [], scorers };
}

export const deleteCase = defineDeleteOperation<{ id: string }>({
  operationId: 'deleteEvalCase',
  path: '/v1/evals/cases/{id}',
  tag: TAG,
  summary: 'Delete a case; experiments keep their copy of it',
  params: refParams,
  remove: async (tx, tenantId, { id }) => orNotFound(await deleteCaseById(tx, tenantId, id), 'case', id),
});

export default [listSuites, upsertSuite, getSuite, updateSuiteOperation, deleteSuite, listCases, addCases, deleteCase];
