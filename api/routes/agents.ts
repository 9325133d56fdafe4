import { deleteTemporalSchedulesOfDeletedRows } from '../../activities/schedules/temporal-schedule.js';
import {
  addAgentVersion,
  deleteAgentById,
  findAgent,
  findAgentByName,
  insertAgentIfNew,
  listAgentsPage,
  listVersionsOfAgent,
  updateAgentById,
  type AgentRow,
} from '../../db/agents.js';
import { listScheduleIdsOfAgent } from '../../db/schedules.js';
import type { AgentGraph, AgentVersion } from '../../db/schema.js';
import { MAX_GRAPH_NODES } from '../../activities/runs/plan.js';
import { MAX_NODE_TOOLS } from '../../activities/runs/skills.js';
import { ApiError, orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { defineListOperation } from '../list-operation.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, refParams, timestamp, upsertResultOf } from '../schemas.js';
import { isoTimestamp } from '../iso-timestamp.js';

const TAG = 'Agents';

const agentName = nameSchema({ description: 'Unique in the workspace; usable in place of the id in paths.' });

const agentSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  published_version: { type: ['integer', 'null'], description: 'The version runs execute, null when none is published.' },
  created_at: timestamp,
  updated_at: timestamp,
});
const agentBody = closedObject({ agent: agentSchema });

/** The graph: `nodes` with an `id` and the tool ids they may call; every other field is the agent's own. */
const graphSchema: JsonSchema = graphShape({});

/**
 * A graph a request brings (a new version, an experiment's variant), within the bounds a run's start can
 * resolve: each node's prompt, skills and tools are read then. Answers keep the unbounded shape: a
 * version stored before the bounds is still shown (MCP clients check results against it).
 */
export const graphBodySchema: JsonSchema = graphShape({ nodes: MAX_GRAPH_NODES, toolRefs: MAX_NODE_TOOLS, text: 200 });

function graphShape(bounds: { nodes?: number; toolRefs?: number; text?: number }): JsonSchema {
  const text = { type: 'string', minLength: 1, ...(bounds.text && { maxLength: bounds.text }) };
  return {
    type: 'object',
    required: ['nodes'],
    properties: {
      nodes: {
        type: 'array',
        minItems: 1,
        ...(bounds.nodes && { maxItems: bounds.nodes }),
        // JSON Schema can require unique items, not items unique by one property: the server checks it.
        description: 'The nodes; each `id` must be unique among them (refused with a 400 otherwise, which JSON Schema cannot express).',
        items: {
          type: 'object',
          required: ['id'],
          properties: {
            id: text,
            toolRefs: { type: 'array', ...(bounds.toolRefs && { maxItems: bounds.toolRefs }), items: text, default: [] },
          },
        },
      },
    },
  };
}

const versionSchema = closedObject({
  agent_id: { type: 'string' },
  version: { type: 'integer' },
  version_id: { type: 'string' },
  status: { enum: ['published', 'draft', 'archived'] },
  published: { type: 'boolean' },
  graph: graphSchema,
  created_at: timestamp,
});

function agentJson(agent: AgentRow) {
  return { ...pick(agent, ['id', 'name', 'description', 'published_version']), ...timestampsJson(agent) };
}

function versionJson(version: AgentVersion) {
  return {
    agent_id: version.agent_id,
    version: version.version,
    version_id: version.id,
    status: version.status,
    published: version.status === 'published',
    graph: version.graph,
    created_at: isoTimestamp(version.created_at),
  };
}

/** The agent `ref` names (id first, then name), or 404: what every operation on an agent starts with. */
export const agentOr404 = refOr404(findAgent, 'agent');

export const listAgents = defineListOperation({
  operationId: 'listAgents',
  path: '/v1/agents',
  tag: TAG,
  summary: 'List agents, oldest first',
  plural: 'agents',
  pageDescription: 'A page of agents',
  itemSchema: agentSchema,
  page: listAgentsPage,
  toJson: agentJson,
});

export const createAgent = defineOperation<Record<string, never>, unknown, { name: string; description?: string }>({
  operationId: 'createAgent',
  method: 'post',
  path: '/v1/agents',
  tag: TAG,
  summary: 'Create an agent, or return the existing one with this name',
  access: 'key',
  body: closedObject({ name: agentName, description: { type: 'string', maxLength: 10000 } }, { required: ['name'] }),
  responses: {
    201: { description: 'Created', schema: upsertResultOf('agent', agentSchema) },
    200: { description: 'An agent with this name already existed; it is returned unchanged', schema: upsertResultOf('agent', agentSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    const { agent, created } = await tenant(async (tx) => {
      const insertedId = await insertAgentIfNew(tx, caller.tenantId, { name: body.name, description: body.description ?? null });
      const agent = insertedId ? await findAgent(tx, caller.tenantId, insertedId) : await findAgentByName(tx, caller.tenantId, body.name);
      return { agent: orNotFound(agent, 'agent', body.name), created: insertedId !== undefined };
    });
    return { status: created ? 201 : 200, body: { agent: agentJson(agent), created } };
  },
});

export const getAgent = defineOperation<{ id: string }>({
  operationId: 'getAgent',
  method: 'get',
  path: '/v1/agents/{id}',
  tag: TAG,
  summary: 'Read one agent by id or name',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The agent', schema: agentBody } },
  handler: async ({ params, caller, tenantReads }) => {
    const agent = await tenantReads((reader) => agentOr404(reader, caller.tenantId, params.id));
    return { status: 200, body: { agent: agentJson(agent) } };
  },
});

export const updateAgent = defineOperation<{ id: string }, unknown, { name?: string; description?: string | null }>({
  operationId: 'updateAgent',
  method: 'patch',
  path: '/v1/agents/{id}',
  tag: TAG,
  summary: 'Rename or re-describe an agent (management keys only)',
  access: 'management',
  params: refParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: { name: agentName, description: { type: ['string', 'null'], maxLength: 10000 } },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The updated agent', schema: agentBody } },
  handler: async ({ params, body, caller, tenant }) => {
    const agent = await conflictIfNameTaken(`an agent named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const current = await agentOr404(tx, caller.tenantId, params.id);
        await updateAgentById(tx, caller.tenantId, current.id, body);
        return await agentOr404(tx, caller.tenantId, current.id);
      }),
    );
    return { status: 200, body: { agent: agentJson(agent) } };
  },
});

export const deleteAgent = defineDeleteOperation<{ id: string }, Record<string, unknown>, string[]>({
  operationId: 'deleteAgent',
  path: '/v1/agents/{id}',
  tag: TAG,
  summary: 'Delete an agent and its versions (and its schedules)',
  params: refParams,
  find: (tx, tenantId, { id }) => agentOr404(tx, tenantId, id),
  deleteById: async (tx, tenantId, id) => {
    const scheduleIds = await listScheduleIdsOfAgent(tx, tenantId, id);
    await deleteAgentById(tx, tenantId, id);
    return scheduleIds;
  },
  // The schedules' rows went with the agent; their Temporal Schedules go once that is committed.
  afterCommit: (deps, scheduleIds) => deleteTemporalSchedulesOfDeletedRows(deps.temporal, scheduleIds),
});

export const listAgentVersions = defineOperation<{ id: string }>({
  operationId: 'listAgentVersions',
  method: 'get',
  path: '/v1/agents/{id}/versions',
  tag: TAG,
  summary: "The agent's current version, and every version newest first",
  description:
    'The top-level fields describe the current version: the published one, else the latest draft ' +
    '(all null when the agent has no version yet). `versions` lists every version, newest first.',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: {
    200: {
      description: 'Current version and history',
      schema: closedObject(
        {
          agent_id: { type: 'string' },
          version: { type: ['integer', 'null'] },
          version_id: { type: ['string', 'null'] },
          status: { enum: ['published', 'draft', null] },
          published: { type: 'boolean' },
          graph: { anyOf: [graphSchema, { type: 'null' }] },
          created_at: timestamp,
          versions: { type: 'array', items: versionSchema },
        },
        { optional: ['created_at'] },
      ),
    },
  },
  handler: async ({ params, caller, tenantReads }) => {
    const { agent, versions } = await tenantReads(async (reader) => {
      const found = await agentOr404(reader, caller.tenantId, params.id);
      return { agent: found, versions: await listVersionsOfAgent(reader, caller.tenantId, found.id) };
    });
    const current = currentVersion(versions);
    const none = { version: null, version_id: null, status: null, published: false, graph: null };
    return {
      status: 200,
      body: { ...(current ? versionJson(current) : none), agent_id: agent.id, versions: versions.map(versionJson) },
    };
  },
});

/** The version runs execute: the published one, else the newest draft. */
export function currentVersion(versionsNewestFirst: AgentVersion[]): AgentVersion | undefined {
  return (
    versionsNewestFirst.find((v) => v.status === 'published') ?? versionsNewestFirst.find((v) => v.status === 'draft')
  );
}

export const createAgentVersion = defineOperation<{ id: string }, unknown, { graph: AgentGraph; publish?: boolean }>({
  operationId: 'createAgentVersion',
  method: 'post',
  path: '/v1/agents/{id}/versions',
  tag: TAG,
  summary: 'Add a version from a graph; published unless `publish` is false',
  description: 'Publishing archives the previously published version. A draft leaves it untouched.',
  access: 'key',
  params: refParams,
  body: closedObject({ graph: graphBodySchema, publish: { type: 'boolean', default: true } }, { required: ['graph'] }),
  errors: ['not_found'],
  responses: { 201: { description: 'The new version', schema: closedObject({ version: versionSchema }) } },
  handler: async ({ params, body, caller, tenant }) => {
    assertUniqueNodeIds(body.graph);
    const version = await tenant(async (tx) => {
      const agent = await agentOr404(tx, caller.tenantId, params.id);
      return addAgentVersion(tx, caller.tenantId, agent.id, body.graph, body.publish !== false);
    });
    return { status: 201, body: { version: versionJson(version) } };
  },
});

function assertUniqueNodeIds(graph: AgentGraph): void {
  const seen = new Set<string>();
  for (const [index, node] of graph.nodes.entries()) {
    if (seen.has(node.id)) {
      throw new ApiError('invalid_request', `duplicate node id '${node.id}'`, {
        fields: [{ field: `body.graph.nodes.${index}.id`, message: 'duplicates an earlier node id' }],
      });
    }
    seen.add(node.id);
  }
}

export default [listAgents, createAgent, getAgent, updateAgent, deleteAgent, listAgentVersions, createAgentVersion];
