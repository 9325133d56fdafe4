import type Koa from 'koa';
import type { ErrorCode } from './errors.js';
import type { AppDeps } from './deps.js';
import type { TenantScoped, TenantTx } from '../db/tenant-transaction.js';
import type { JsonSchema } from '../activities/json-schema/types.js';

export type { JsonSchema };

/** Who may call an operation: anyone, any valid credential, or management keys only. */
export type Access = 'public' | 'key' | 'management';

export interface Caller {
  tenantId: string;
  keyId: string;
  /** `publishable`: a deployment's public key, confined to its deployment (docs/deployments.md). */
  kind: 'management' | 'standard' | 'publishable';
  /** The signed-in person behind an OAuth access token (whose role some operations check); unset for API keys. */
  userId?: string;
  /** Set for a publishable key: the deployment it belongs to. */
  deployment?: DeploymentScope;
}

/** What a publishable key may reach: runs of one agent, and the runs it started itself. */
export interface DeploymentScope {
  id: string;
  agentId: string;
  version: number | null;
  runsPerMinute: number;
  runsPerMinutePerVisitor: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface OperationContext<Params, Query, Body> {
  params: Params;
  query: Query;
  body: Body;
  deps: AppDeps;
  koa: Koa.Context;
  /** The authenticated caller; operations with `access: 'public'` must not read it. */
  caller: Caller;
  /** Runs `work` in a transaction that sees only the caller's tenant (see db/tenant-transaction.ts). */
  tenant<T>(work: (tx: TenantTx) => Promise<T>): Promise<T>;
  /**
   * Runs read-only `work` as the caller's tenant, each statement on its own (db/tenant-reads.ts): one round
   * trip a query instead of a transaction's three. For reads that need no consistent snapshot of several rows.
   */
  tenantReads<T>(work: (reader: TenantScoped) => Promise<T>): Promise<T>;
}

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** Defaults to application/json. */
  contentType?: string;
}

/**
 * Everything about one endpoint in one place: its path, schemas, operationId and handler. The router,
 * the request validation and the OpenAPI document are all generated from these declarations.
 */
export interface Operation<Params = Record<string, string>, Query = Record<string, unknown>, Body = undefined> {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path, e.g. `/v1/agents/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  /**
   * A deployment's publishable key may call it too (every other operation refuses one with 403); the
   * handler must then confine the key to its deployment (api/deployments/scope.ts).
   */
  publishable?: true;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /**
   * The OpenAPI requestBody, for an operation that reads its own body (uploads). The router leaves the
   * request stream to the handler; `body` must then be unset.
   */
  requestBody?: Record<string, unknown>;
  responses: Record<number, ResponseSpec>;
  /** Error codes the handler itself can answer; auth, validation and body-size errors are added from the declaration. */
  errors?: ErrorCode[];
  handler(ctx: OperationContext<Params, Query, Body>): Promise<Reply>;
}

// Operations of different parameter types live in one list; the router checks requests against each
// operation's own schemas before its handler sees them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any, any>;

/**
 * Whether a request may leave the JSON body out: when the body's schema is an object that asks for
 * nothing (every property optional), no body means `{}`, as `POST …/rotate-secret` with nothing to say.
 */
export function bodyIsOptional(body: JsonSchema | undefined): boolean {
  if (!body || body.type !== 'object') return false;
  // Keywords that could make `{}` invalid: such a body is required, to be safe.
  if (BODY_CONSTRAINING_KEYWORDS.some((keyword) => keyword in body)) return false;
  return !Array.isArray(body.required) || body.required.length === 0;
}

const BODY_CONSTRAINING_KEYWORDS = ['minProperties', 'oneOf', 'anyOf', 'allOf', 'not', 'if', 'dependentRequired', 'dependentSchemas', '$ref'];

export function defineOperation<Params = Record<string, string>, Query = Record<string, unknown>, Body = undefined>(
  operation: Operation<Params, Query, Body>,
): Operation<Params, Query, Body> {
  return operation;
}
