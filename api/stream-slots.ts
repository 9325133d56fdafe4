import type Koa from 'koa';
import { integerSetting } from '../db/integer-settings.js';
import { clientAddress } from './client-address.js';
import { ApiError } from './errors.js';
import { OpenResponseCounts, type Bound } from './open-response-counts.js';
import type { Caller } from './operation.js';

/**
 * Event streams (a run's, an experiment's) a workspace may hold open at once on one API process.
 *
 * Why: a stream holds a socket, its buffers and a share of a log feed for as long as its run lives, and
 * costs nothing to open again; without a bound one workspace (or anyone with a deployment's publishable
 * key) could open streams until the process runs out of memory or descriptors, taking every other
 * workspace's streams with it. The bound is per process because what it protects is the process; it is
 * well above what one workspace needs (the SSE benchmark follows 200 runs with 2,000 streams of one key,
 * ~27 KB each), and STREAMS_PER_WORKSPACE moves it.
 *
 * A deployment's publishable key is public, so its callers get a share of their own: 20 streams per
 * visitor address (STREAMS_PER_VISITOR) and, all of the workspace's visitors together, half of its
 * streams, so that strangers cannot take the streams of the workspace's own keys. The console's streams
 * have a per-session bound (api/console/request.ts).
 */
const DEFAULT_STREAMS_PER_WORKSPACE = 5_000;
const DEFAULT_STREAMS_PER_VISITOR = 20;

/** A client refused a stream may try again this many seconds later (when one of its streams has ended). */
const RETRY_AFTER_SECONDS = 5;

/** Open streams per counted subject: a workspace, its visitors together, one visitor of a deployment. */
const openStreams = new OpenResponseCounts();

interface StreamBound extends Bound {
  refusal: string;
}

/** Read per stream, like SSE_PING_INTERVAL_MS, so a change needs no restart of the test platform. */
function bounds(caller: Caller, ip: string, env: NodeJS.ProcessEnv = process.env): StreamBound[] {
  const perWorkspace = integerSetting('STREAMS_PER_WORKSPACE', env) ?? DEFAULT_STREAMS_PER_WORKSPACE;
  const workspace = { subject: `workspace:${caller.tenantId}`, limit: perWorkspace, refusal: `this workspace already has ${perWorkspace} event streams open on this server` };
  if (!caller.deployment) return [workspace];
  const perVisitor = integerSetting('STREAMS_PER_VISITOR', env) ?? DEFAULT_STREAMS_PER_VISITOR;
  const visitorsShare = Math.max(1, Math.floor(perWorkspace / 2));
  return [
    workspace,
    { subject: `visitors:${caller.tenantId}`, limit: visitorsShare, refusal: `this workspace's visitors already have ${visitorsShare} event streams open on this server` },
    { subject: `visitor:${caller.deployment.id}:${clientAddress(ip)}`, limit: perVisitor, refusal: `this address already has ${perVisitor} event streams open` },
  ];
}

/**
 * Counts the request's stream until its response closes (ended, failed or the client gone), or throws
 * 429 when any of the caller's bounds is reached (counting nothing then); a client already gone is not
 * counted. Called first in the handler, before any lookup, so a refused `POST …/runs` records and
 * starts no run.
 */
export function holdStreamSlot(koa: Koa.Context, caller: Caller): void {
  const full = openStreams.hold(koa, bounds(caller, koa.ip));
  if (full) throw new ApiError('rate_limited', `${full.refusal}; retry when one has ended`, {}, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
}

/** Streams a workspace holds open on this process (for tests and diagnostics). */
export function openStreamCount(tenantId: string): number {
  return openStreams.count(`workspace:${tenantId}`);
}
