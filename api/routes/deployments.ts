import { findAgentVersionByNumber } from '../../db/agents.js';
import {
  deleteDeploymentById,
  findDeployment,
  insertDeployment,
  listDeploymentsPage,
  rotatePublishableKey,
  updateDeploymentById,
  type DeploymentFields,
  SLUG_PATTERN,
} from '../../db/deployments.js';
import type { Deployment } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { invalidRequest } from '../errors.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { defineListOperation } from '../list-operation.js';
import { defineOperation } from '../operation.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, MAX_REQUEST_INTEGER, refParams, timestamp } from '../schemas.js';
import { agentOr404 } from './agents.js';

const TAG = 'Deployments';

/** The hosted chat page's address (api/deployments/chat-page.ts). */
export function chatPageUrl(publicUrl: string, slug: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/d/${slug}`;
}

const slugSchema = {
  type: 'string',
  pattern: SLUG_PATTERN,
  description: 'Lower-case letters, digits and inner hyphens, at most 63: the hosted page is at `/d/{slug}`. Unique across the whole service.',
};
const originSchema = {
  type: 'string',
  maxLength: 300,
  pattern: '^https?://[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?$',
  description: 'An origin as browsers send it: `https://app.example.com`, lower case, a port only when not the default.',
};
const allowedOriginsSchema = {
  type: 'array',
  items: originSchema,
  uniqueItems: true,
  maxItems: 50,
  description: "Origins whose pages may call the API with the publishable key (CORS). The service's own origin (the hosted page) always may.",
};
const perMinute = (what: string) => ({ type: 'integer', minimum: 1, maximum: 10_000, description: what });
const rateLimitSchema = closedObject({
  runs_per_minute: perMinute('Runs the publishable key may start per minute, all visitors together (default 60).'),
  runs_per_minute_per_visitor: perMinute('Runs one visitor (IP address) may start per minute (default 10).'),
});
const versionSchema = { type: ['integer', 'null'], minimum: 1, maximum: MAX_REQUEST_INTEGER, description: 'A pinned version; null runs whatever version is published.' };
const titleSchema = { type: ['string', 'null'], maxLength: 200, pattern: '^[^\\u0000-\\u001f]*$', description: "The hosted page's heading; null shows the agent's name." };

const deploymentSchema = closedObject({
  id: { type: 'string' },
  slug: { type: 'string' },
  title: { type: ['string', 'null'] },
  agent_id: { type: 'string' },
  version: { type: ['integer', 'null'], description: 'The pinned version, or null: whatever version is published.' },
  allowed_origins: { type: 'array', items: { type: 'string' } },
  rate_limit: rateLimitSchema,
  publishable_key: { type: 'string', pattern: '^svc_pk_', description: 'Public by design: it can only start, follow and answer runs of this agent.' },
  url: { type: 'string', description: 'The hosted chat page.' },
  created_at: timestamp,
  updated_at: timestamp,
});
const deploymentBody = closedObject({ deployment: deploymentSchema });

const DEFAULT_RATE_LIMIT = { runs_per_minute: 60, runs_per_minute_per_visitor: 10 };

function deploymentJson(deployment: Deployment, publicUrl: string) {
  return {
    ...pick(deployment, ['id', 'slug', 'title', 'agent_id', 'version', 'allowed_origins']),
    rate_limit: { runs_per_minute: deployment.runs_per_minute, runs_per_minute_per_visitor: deployment.runs_per_minute_per_visitor },
    publishable_key: deployment.publishable_key,
    url: chatPageUrl(publicUrl, deployment.slug),
    ...timestampsJson(deployment),
  };
}

const deploymentOr404 = refOr404(findDeployment, 'deployment');

interface DeploymentInput {
  agent?: string;
  slug?: string;
  title?: string | null;
  version?: number | null;
  allowed_origins?: string[];
  rate_limit?: { runs_per_minute?: number; runs_per_minute_per_visitor?: number };
}

const inputProperties = {
  agent: { type: 'string', minLength: 1, maxLength: 200, description: 'The agent (id or name).' },
  slug: slugSchema,
  title: titleSchema,
  version: versionSchema,
  allowed_origins: allowedOriginsSchema,
  rate_limit: { ...rateLimitSchema, required: [] },
};

/**
 * Checks what JSON Schema cannot (every origin in canonical form; the pinned version exists) and
 * resolves the agent: the fields to store. `current` is the deployment a PATCH changes.
 */
async function fieldsOf(tx: TenantTx, tenantId: string, input: DeploymentInput, current?: Deployment): Promise<Partial<DeploymentFields>> {
  input.allowed_origins?.forEach((origin, i) => {
    if (!isCanonicalOrigin(origin)) {
      throw invalidRequest('invalid allowed_origins', [{ field: `body.allowed_origins.${i}`, message: `'${origin}' is not an origin as a browser sends it` }]);
    }
  });
  const agentId = input.agent !== undefined ? (await agentOr404(tx, tenantId, input.agent)).id : current!.agent_id;
  const version = input.version !== undefined ? input.version : (current?.version ?? null);
  if (version !== null && !(await findAgentVersionByNumber(tx, tenantId, agentId, version))) {
    throw invalidRequest('invalid version', [{ field: 'body.version', message: `the agent has no version ${version}` }]);
  }
  return {
    agentId,
    version,
    ...(input.slug !== undefined && { slug: input.slug }),
    ...(input.title !== undefined && { title: input.title }),
    ...(input.allowed_origins !== undefined && { allowedOrigins: input.allowed_origins }),
    ...(input.rate_limit?.runs_per_minute !== undefined && { runsPerMinute: input.rate_limit.runs_per_minute }),
    ...(input.rate_limit?.runs_per_minute_per_visitor !== undefined && { runsPerMinutePerVisitor: input.rate_limit.runs_per_minute_per_visitor }),
  };
}

function isCanonicalOrigin(origin: string): boolean {
  try {
    // Port 0 parses, but no page is ever served from it.
    const url = new URL(origin);
    return url.origin === origin && url.port !== '0';
  } catch {
    return false;
  }
}

const slugTaken = (slug: string | undefined) => `the slug '${slug}' is taken (slugs are unique across the service)`;

export const listDeployments = defineListOperation({
  operationId: 'listDeployments',
  path: '/v1/deployments',
  tag: TAG,
  summary: 'List deployments, oldest first',
  plural: 'deployments',
  pageDescription: 'A page of deployments',
  itemSchema: deploymentSchema,
  page: listDeploymentsPage,
  toJson: (row, deps) => deploymentJson(row, deps.publicUrl),
});

export const createDeployment = defineOperation<Record<string, never>, unknown, DeploymentInput & { agent: string; slug: string }>({
  operationId: 'createDeployment',
  method: 'post',
  path: '/v1/deployments',
  tag: TAG,
  summary: 'Publish an agent under a slug, with a publishable key and a hosted chat page (management keys only)',
  access: 'management',
  body: closedObject(inputProperties, { required: ['agent', 'slug'] }),
  errors: ['not_found', 'conflict'],
  responses: { 201: { description: 'Created', schema: deploymentBody } },
  handler: async ({ body, caller, tenant, deps }) => {
    const deployment = await conflictIfNameTaken(slugTaken(body.slug), () =>
      tenant(async (tx) => {
        const fields = await fieldsOf(tx, caller.tenantId, body);
        const defaults = { title: null, allowedOrigins: [], runsPerMinute: DEFAULT_RATE_LIMIT.runs_per_minute, runsPerMinutePerVisitor: DEFAULT_RATE_LIMIT.runs_per_minute_per_visitor };
        return insertDeployment(tx, caller.tenantId, { ...defaults, ...fields } as DeploymentFields);
      }),
    );
    return { status: 201, body: { deployment: deploymentJson(deployment, deps.publicUrl) } };
  },
});

export const getDeployment = defineOperation<{ id: string }>({
  operationId: 'getDeployment',
  method: 'get',
  path: '/v1/deployments/{id}',
  tag: TAG,
  summary: 'Read one deployment by id or slug',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The deployment', schema: deploymentBody } },
  handler: async ({ params, caller, tenantReads, deps }) => {
    const deployment = await tenantReads((reader) => deploymentOr404(reader, caller.tenantId, params.id));
    return { status: 200, body: { deployment: deploymentJson(deployment, deps.publicUrl) } };
  },
});

export const updateDeployment = defineOperation<{ id: string }, unknown, DeploymentInput>({
  operationId: 'updateDeployment',
  method: 'patch',
  path: '/v1/deployments/{id}',
  tag: TAG,
  summary: 'Change what a deployment publishes, its slug, origins or limits (management keys only)',
  description: 'The publishable key stays the same (rotate it with POST /v1/deployments/{id}/rotate-key). A pinned version must exist for the (new) agent.',
  access: 'management',
  params: refParams,
  body: { ...closedObject(inputProperties, { required: [] }), minProperties: 1 },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The updated deployment', schema: deploymentBody } },
  handler: async ({ params, body, caller, tenant, deps }) => {
    const deployment = await conflictIfNameTaken(slugTaken(body.slug), () =>
      tenant(async (tx) => {
        const current = await deploymentOr404(tx, caller.tenantId, params.id);
        await updateDeploymentById(tx, caller.tenantId, current.id, await fieldsOf(tx, caller.tenantId, body, current));
        return deploymentOr404(tx, caller.tenantId, current.id);
      }),
    );
    return { status: 200, body: { deployment: deploymentJson(deployment, deps.publicUrl) } };
  },
});

export const rotateDeploymentKey = defineOperation<{ id: string }>({
  operationId: 'rotateDeploymentKey',
  method: 'post',
  path: '/v1/deployments/{id}/rotate-key',
  tag: TAG,
  summary: 'Replace the publishable key; the old one stops working at once (management keys only)',
  access: 'management',
  params: refParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The deployment with its new key', schema: deploymentBody } },
  handler: async ({ params, caller, tenant, deps }) => {
    const deployment = await tenant(async (tx) => {
      const current = await deploymentOr404(tx, caller.tenantId, params.id);
      await rotatePublishableKey(tx, caller.tenantId, current.id);
      return deploymentOr404(tx, caller.tenantId, current.id);
    });
    return { status: 200, body: { deployment: deploymentJson(deployment, deps.publicUrl) } };
  },
});

export const deleteDeployment = defineDeleteOperation<{ id: string }>({
  operationId: 'deleteDeployment',
  path: '/v1/deployments/{id}',
  tag: TAG,
  summary: 'Delete a deployment: its page and publishable key stop working; its runs stay (management keys only)',
  access: 'management',
  params: refParams,
  find: (tx, tenantId, { id }) => deploymentOr404(tx, tenantId, id),
  deleteById: deleteDeploymentById,
});

export default [listDeployments, createDeployment, getDeployment, updateDeployment, rotateDeploymentKey, deleteDeployment];
