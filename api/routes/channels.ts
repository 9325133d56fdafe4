import { newSigningSecret } from '../../activities/standard-webhooks/secret.js';
import { TIMESTAMP_TOLERANCE_SECONDS } from '../../activities/standard-webhooks/signature.js';
import { sealSecret } from '../../activities/secrets/secret-box.js';
import { findAgent } from '../../db/agents.js';
import {
  channelSecretContext,
  deleteChannelById,
  findChannel,
  insertChannel,
  listChannelsPage,
  newChannelId,
  replaceChannelSecret,
  updateChannel,
} from '../../db/channels.js';
import type { PageQuery } from '../../db/page.js';
import type { Channel, ChannelKind } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { CHANNEL_KINDS } from '../channels/kinds.js';
import { receiveChannelMessage as receive } from '../channels/inbound.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { invalidRequest } from '../errors.js';
import { nulFree } from '../nul-free-schema.js';
import { checkSigningSecret, signingSecretSchema } from '../signing-secret.js';
import { sealingOr503 } from '../unavailable-secrets.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, listOf, pageQuery, pathParams, timestamp } from '../schemas.js';
import { isoTimestamp } from '../iso-timestamp.js';

const TAG = 'Channels';
const KINDS = Object.keys(CHANNEL_KINDS) as ChannelKind[];
const idParams = pathParams(['id'], 200);
const channelOr404 = refOr404(findChannel, 'channel');

const descriptionSchema: JsonSchema = { type: ['string', 'null'], maxLength: 10_000 };
const agentRef: JsonSchema = { type: 'string', minLength: 1, maxLength: 200, description: 'The agent its messages run (id or name).' };

const channelSchema = closedObject({
  id: { type: 'string' },
  kind: { enum: KINDS },
  agent_id: { type: 'string' },
  description: { type: ['string', 'null'] },
  url: { type: 'string', description: 'Where the sender posts: `POST {url}` with the Standard Webhooks headers (docs/channels.md).' },
  secret_rotated_at: { ...timestamp, description: 'When the signing secret was last set.' },
  created_at: timestamp,
  updated_at: timestamp,
});
const withSecretSchema = closedObject({
  channel: channelSchema,
  secret: { type: 'string', description: 'The signing secret, shown this once: the sender signs with it. It cannot be read back; rotate it if lost.' },
});

function channelJson(channel: Channel, publicUrl: string) {
  return {
    ...pick(channel, ['id', 'kind', 'agent_id', 'description']),
    url: `${publicUrl.replace(/\/+$/, '')}/v1/channels/${channel.id}/messages`,
    secret_rotated_at: isoTimestamp(channel.secret_rotated_at),
    ...timestampsJson(channel),
  };
}

/** The agent a channel runs, by id or name; one that is not in the workspace is the request's mistake (400). */
async function resolveAgent(tx: TenantTx, tenantId: string, ref: string): Promise<string> {
  const agent = await findAgent(tx, tenantId, ref);
  if (!agent) throw invalidRequest(`agent '${ref}' not found`, [{ field: 'body.agent', message: 'no agent of the workspace has this id or name' }]);
  return agent.id;
}

/** `secret` sealed for the channel's row; 503 on a server without SECRETS_KEY. */
function sealChannelSecret(tenantId: string, channelId: string, secret: string): Promise<string> {
  return sealingOr503("a channel's secret", () => sealSecret(secret, channelSecretContext(tenantId, channelId)));
}

export const listChannels = defineOperation<Record<string, never>, PageQuery & { agent?: string }>({
  operationId: 'listChannels',
  method: 'get',
  path: '/v1/channels',
  tag: TAG,
  summary: "The workspace's inbound channels, oldest first (their secrets are never shown)",
  access: 'key',
  query: {
    ...pageQuery,
    properties: {
      ...(pageQuery.properties as object),
      agent: { type: 'string', minLength: 1, description: "Only this agent's channels (id or name); one that names no agent gives an empty list." },
    },
  },
  responses: { 200: { description: 'A page of channels', schema: listOf('channels', channelSchema) } },
  handler: async ({ query, caller, tenantReads, deps }) => {
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const agent = query.agent ? await findAgent(reader, caller.tenantId, query.agent) : undefined;
      if (query.agent && !agent) return { items: [], nextCursor: null };
      return listChannelsPage(reader, caller.tenantId, { agentId: agent?.id }, query);
    });
    return { status: 200, body: { channels: items.map((row) => channelJson(row, deps.publicUrl)), next_cursor: nextCursor } };
  },
});

export const createChannel = defineOperation<Record<string, never>, unknown, { kind: ChannelKind; agent: string; description?: string | null; secret?: string }>({
  operationId: 'createChannel',
  method: 'post',
  path: '/v1/channels',
  tag: TAG,
  summary: 'Open an inbound channel: an address whose signed messages (`webhook`) or call turns (`voice`) run an agent',
  description:
    'The answer holds the signing secret, shown this once: the platform makes one (`whsec_…`) unless `secret` gives one. It is stored encrypted ' +
    '(SECRETS_KEY; without it the answer is 503 `unavailable`) and never returned again; POST /v1/channels/{id}/rotate-secret replaces it. ' +
    'An agent that is not in the workspace is a 400. See docs/channels.md.',
  access: 'management',
  body: closedObject({ kind: { enum: KINDS }, agent: agentRef, description: descriptionSchema, secret: signingSecretSchema }, { required: ['kind', 'agent'] }),
  responses: { 201: { description: 'Created, with its secret', schema: withSecretSchema } },
  handler: async ({ body, caller, tenant, deps }) => {
    if (body.secret !== undefined) checkSigningSecret(body.secret);
    const id = newChannelId();
    const secret = body.secret ?? newSigningSecret();
    const sealedSecret = await sealChannelSecret(caller.tenantId, id, secret);
    const channel = await tenant(async (tx) => {
      const agentId = await resolveAgent(tx, caller.tenantId, body.agent);
      return insertChannel(tx, caller.tenantId, { id, agentId, kind: body.kind, description: body.description ?? null, sealedSecret });
    });
    return { status: 201, body: { channel: channelJson(channel, deps.publicUrl), secret } };
  },
});

export const getChannel = defineOperation<{ id: string }>({
  operationId: 'getChannel',
  method: 'get',
  path: '/v1/channels/{id}',
  tag: TAG,
  summary: 'An inbound channel (its secret is never shown)',
  access: 'key',
  params: idParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The channel', schema: closedObject({ channel: channelSchema }) } },
  handler: async ({ params, caller, tenantReads, deps }) => {
    const channel = await tenantReads((reader) => channelOr404(reader, caller.tenantId, params.id));
    return { status: 200, body: { channel: channelJson(channel, deps.publicUrl) } };
  },
});

export const updateChannelOperation = defineOperation<{ id: string }, unknown, { agent?: string; description?: string | null; secret?: string }>({
  operationId: 'updateChannel',
  method: 'patch',
  path: '/v1/channels/{id}',
  tag: TAG,
  summary: "Change a channel's agent, description or secret",
  description:
    'Fields left out stay as they are; `kind` cannot change. A new `agent` takes the next messages: senders continue in new threads of it, calls already going stay with theirs. ' +
    'A given `secret` replaces the signing secret at once (it is not shown back).',
  access: 'management',
  params: idParams,
  body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { agent: agentRef, description: descriptionSchema, secret: signingSecretSchema } },
  errors: ['not_found'],
  responses: { 200: { description: 'The channel as changed', schema: closedObject({ channel: channelSchema }) } },
  handler: async ({ params, body, caller, tenant, deps }) => {
    if (body.secret !== undefined) checkSigningSecret(body.secret);
    const channel = await tenant(async (tx) => {
      const current = await channelOr404(tx, caller.tenantId, params.id);
      const agentId = body.agent === undefined ? undefined : await resolveAgent(tx, caller.tenantId, body.agent);
      if (body.secret !== undefined) await replaceChannelSecret(tx, caller.tenantId, current.id, await sealChannelSecret(caller.tenantId, current.id, body.secret));
      return updateChannel(tx, caller.tenantId, current.id, { agentId, description: body.description });
    });
    return { status: 200, body: { channel: channelJson(channel, deps.publicUrl) } };
  },
});

export const rotateChannelSecret = defineOperation<{ id: string }, unknown, { secret?: string }>({
  operationId: 'rotateChannelSecret',
  method: 'post',
  path: '/v1/channels/{id}/rotate-secret',
  tag: TAG,
  summary: "Replace a channel's signing secret (generated, or the one given); shown this once",
  description: 'The old secret stops verifying at once: give the new one to the sender.',
  access: 'management',
  params: idParams,
  body: closedObject({ secret: signingSecretSchema }, { required: [] }),
  errors: ['not_found'],
  responses: { 200: { description: 'The channel and its new secret', schema: withSecretSchema } },
  handler: async ({ params, body, caller, tenant, deps }) => {
    if (body.secret !== undefined) checkSigningSecret(body.secret);
    const secret = body.secret ?? newSigningSecret();
    const channel = await tenant(async (tx) => {
      const current = await channelOr404(tx, caller.tenantId, params.id);
      return replaceChannelSecret(tx, caller.tenantId, current.id, await sealChannelSecret(caller.tenantId, current.id, secret));
    });
    return { status: 200, body: { channel: channelJson(channel, deps.publicUrl), secret } };
  },
});

export const deleteChannel = defineDeleteOperation<{ id: string }>({
  operationId: 'deleteChannel',
  path: '/v1/channels/{id}',
  tag: TAG,
  summary: 'Delete a channel: its address stops taking messages (its runs and call records stay)',
  access: 'management',
  params: idParams,
  find: (tx, tenantId, { id }) => channelOr404(tx, tenantId, id),
  deleteById: deleteChannelById,
});

const inboundResponses = Object.assign({}, ...Object.values(CHANNEL_KINDS).map((kind) => kind.responses)) as Record<number, { description: string; schema: JsonSchema }>;

export const receiveChannelMessage = defineOperation<{ id: string }>({
  operationId: 'receiveChannelMessage',
  method: 'post',
  path: '/v1/channels/{id}/messages',
  tag: TAG,
  summary: "A channel's address: a signed message (`webhook`) or call event (`voice`) that runs the channel's agent",
  description:
    'No bearer credential: the request is signed as Standard Webhooks prescribe, with the channel\'s secret. Headers: `webhook-id` (the message\'s ' +
    'unique id, 1–200 printable characters), `webhook-timestamp` (Unix seconds, within ' +
    `${TIMESTAMP_TOLERANCE_SECONDS} s of the server's clock) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">\` ` +
    'keyed with the base64-decoded part of the secret after `whsec_`; several space-separated are allowed). A missing header, a stale timestamp, ' +
    'a wrong signature and an unknown channel all answer 401. A message id the channel has taken before starts nothing and answers what the ' +
    'first delivery did (`replayed: true`). A `webhook` channel takes `{sender, text}` and answers 202 with the run it started in the ' +
    "sender's thread; a `voice` channel takes `call.turn` and `call.ended` events and answers 200 with the agent's reply. Limited to 60 run " +
    'starts per 60 s per channel. See docs/channels.md.',
  access: 'public',
  params: idParams,
  requestBody: {
    required: true,
    content: { 'application/json': { schema: nulFree({ oneOf: Object.values(CHANNEL_KINDS).flatMap((kind) => kind.bodySchemas) }) } },
  },
  errors: ['unauthorized', 'conflict', 'rate_limited', 'unavailable'],
  responses: inboundResponses,
  handler: ({ params, deps, koa }) => receive(deps, koa, params.id),
});

export default [listChannels, createChannel, getChannel, updateChannelOperation, deleteChannel, rotateChannelSecret, receiveChannelMessage];
