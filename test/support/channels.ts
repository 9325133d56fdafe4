import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { call, type ApiResponse } from './api.js';

/**
 * A sender of a channel's messages, signing them as the Standard Webhooks specification says (written
 * here from the specification, not with the platform's own code, so the two are checked against each other).
 */

export function standardWebhooksSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

export interface SendOptions {
  /** `webhook-id`; a new one by default. */
  id?: string;
  /** Unix seconds; now by default. */
  timestamp?: number;
  /** Signs with this secret instead of the channel's. */
  signWith?: string;
  /** Sent as-is (signed as given) instead of JSON-encoding the body. */
  rawBody?: string;
}

export async function sendSigned(channelId: string, secret: string, body: unknown, options: SendOptions = {}): Promise<ApiResponse & { id: string }> {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const raw = options.rawBody ?? JSON.stringify(body);
  const response = await call('POST', `/v1/channels/${channelId}/messages`, {
    rawBody: raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': standardWebhooksSignature(options.signWith ?? secret, id, timestamp, raw),
    },
  });
  return { ...response, id };
}

export async function createChannel(key: string, body: Record<string, unknown>): Promise<{ id: string; secret: string; channel: any }> {
  const response = await call('POST', '/v1/channels', { key, body });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return { id: response.body.channel.id, secret: response.body.secret, channel: response.body.channel };
}

/** The run once it has ended (or paused), read through the API. */
export async function settledRun(key: string, runId: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await call('GET', `/v1/runs/${runId}`, { key });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    if (['completed', 'failed', 'cancelled', 'paused'].includes(response.body.run.status)) return response.body.run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${response.body.run.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
