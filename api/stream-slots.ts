import type Koa from 'koa';
import { integerSetting } from '../db/integer-settings.js';
import { ApiError } from './errors.js';

/**
 * Event streams (a run's, an experiment's) a workspace may hold open at once on one API process.
 *
 * Why: a stream holds a socket, its buffers and a share of a log feed for as long as its run lives, and
 * costs nothing to open again; without a bound one workspace (or anyone with a deployment's publishable
 * key) could open streams until the process runs out of memory or descriptors, taking every other
 * workspace's streams with it. The bound is per process because what it protects is the process; it is
 * well above what one workspace needs (the SSE benchmark follows 200 runs with 2,000 streams of one key,
 * ~27 KB each), and STREAMS_PER_WORKSPACE moves it. The console's own streams have a per-session bound
 * (api/console/request.ts).
 */
const DEFAULT_STREAMS_PER_WORKSPACE = 5_000;

/** A client refused a stream may try again this many seconds later (when one of its streams has ended). */
const RETRY_AFTER_SECONDS = 5;

const openStreams = new Map<string, number>();

/** Read per stream, like SSE_PING_INTERVAL_MS, so a change needs no restart of the test platform. */
function streamsPerWorkspace(env: NodeJS.ProcessEnv = process.env): number {
  return integerSetting('STREAMS_PER_WORKSPACE', env) ?? DEFAULT_STREAMS_PER_WORKSPACE;
}

/**
 * Counts the request's stream against its workspace until the response closes (ended, failed or the
 * client gone), or throws 429 when the workspace already holds its limit. Called before anything is
 * done for the request, so a refused `POST …/runs` starts no run.
 */
export function holdStreamSlot(koa: Koa.Context, tenantId: string): void {
  const limit = streamsPerWorkspace();
  const open = openStreams.get(tenantId) ?? 0;
  if (open >= limit) {
    throw new ApiError('rate_limited', `this workspace already has ${limit} event streams open on this server; retry when one has ended`, {}, {
      'Retry-After': String(RETRY_AFTER_SECONDS),
    });
  }
  openStreams.set(tenantId, open + 1);
  koa.res.once('close', () => {
    const left = (openStreams.get(tenantId) ?? 1) - 1;
    if (left > 0) openStreams.set(tenantId, left);
    else openStreams.delete(tenantId);
  });
}

/** Streams the workspace holds open on this process (for tests and diagnostics). */
export function openStreamCount(tenantId: string): number {
  return openStreams.get(tenantId) ?? 0;
}
