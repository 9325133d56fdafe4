import type Koa from 'koa';
import { signatureProblem, timestampProblem, TIMESTAMP_TOLERANCE_SECONDS } from '../../activities/standard-webhooks/signature.js';
import { openSecret, SecretsUnavailableError, SecretUnreadableError } from '../../activities/secrets/secret-box.js';
import { channelSecretContext, findChannel, findChannelTenant } from '../../db/channels.js';
import type { Channel } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { parseJsonBody, readBodyBytes } from '../middleware/json-body.js';
import type { Reply } from '../operation.js';
import { CHANNEL_KINDS } from './kinds.js';

/**
 * A message at a channel's address: no credential, only a Standard Webhooks signature made with the
 * channel's secret (activities/standard-webhooks/signature.ts). The headers and timestamp are checked first, then
 * the signature against the channel's secret; an unknown channel answers exactly as a wrong signature
 * does, so channel ids cannot be probed. Only then is the body read as JSON and handed to the channel's
 * kind (api/channels/kinds.ts), which also refuses a message id it has taken before.
 */

const MESSAGE_ID = /^[\x21-\x7e]{1,200}$/;

export async function receiveChannelMessage(deps: AppDeps, koa: Koa.Context, channelId: string): Promise<Reply> {
  const bytes = await readBodyBytes(koa);
  const headers = { id: koa.get('webhook-id') || undefined, timestamp: koa.get('webhook-timestamp') || undefined, signature: koa.get('webhook-signature') || undefined };
  if (!headers.id || !headers.timestamp || !headers.signature) throw refused('the webhook-id, webhook-timestamp and webhook-signature headers are required (docs/channels.md)');
  if (!MESSAGE_ID.test(headers.id)) throw refused('webhook-id must be 1 to 200 printable ASCII characters');
  if (timestampProblem(headers.timestamp)) {
    throw refused(`webhook-timestamp must be the Unix time in seconds, within ${TIMESTAMP_TOLERANCE_SECONDS} s of the server's clock`);
  }

  const tenantId = await findChannelTenant(deps.db, channelId);
  const channel = tenantId ? await withTenant(deps.db, tenantId, (tx) => findChannel(tx, tenantId, channelId)) : undefined;
  if (!tenantId || !channel || signatureProblem(await channelSecret(tenantId, channel), headers, bytes) !== undefined) {
    throw refused('the signature does not match this channel');
  }

  const body = parseJsonBody(koa, bytes);
  return CHANNEL_KINDS[channel.kind].receive({ deps, tenantId, channel, messageId: headers.id, body, signal: hangUp(koa) });
}

async function channelSecret(tenantId: string, channel: Channel): Promise<string> {
  try {
    return await openSecret(channel.secret, channelSecretContext(tenantId, channel.id));
  } catch (err) {
    if (err instanceof SecretsUnavailableError || err instanceof SecretUnreadableError) {
      throw new ApiError('unavailable', `this server cannot read the channel's secret: ${err.message}`);
    }
    throw err;
  }
}

/** Aborts when the connection closes before the answer is written (res, not req: req closes once its body is read). */
function hangUp(koa: Koa.Context): AbortSignal {
  const controller = new AbortController();
  koa.res.once('close', () => {
    if (!koa.res.writableEnded) controller.abort();
  });
  return controller.signal;
}

function refused(message: string): ApiError {
  return new ApiError('unauthorized', message);
}
