import { ScheduleNotFoundError, type ScheduleDescription } from '@temporalio/client';
import { cronProblem, DURATION_PATTERN, everyProblem, jitterProblem, timeZoneProblem } from '../../activities/schedules/spec.js';
import {
  createTemporalSchedule,
  deleteTemporalSchedule,
  describeTemporalSchedule,
  isTemporalSpecRefusal,
  updateTemporalSchedule,
} from '../../activities/schedules/temporal-schedule.js';
import { findAgent } from '../../db/agents.js';
import type { PageQuery } from '../../db/page.js';
import { listScheduleRuns } from '../../db/runs.js';
import {
  deleteScheduleById,
  findSchedule,
  hasRoomForSchedule,
  insertSchedule,
  listSchedulesPage,
  lockSchedule,
  scheduleDefinition,
  SCHEDULES_PER_TENANT,
  setSchedulePaused,
  updateSchedule,
  type ScheduleDefinition,
} from '../../db/schedules.js';
import type { Schedule, ScheduleOverlap } from '../../db/schema.js';
import { findThread } from '../../db/threads.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { ApiError, invalidRequest, type FieldError } from '../errors.js';
import { defineOperation, type JsonSchema, type OperationContext } from '../operation.js';
import { RUN_RATE_LIMIT, takeRateLimitTokenNow } from '../rate-limit.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, deletionResult, listOf, nullableTimestamp, pageQuery, pathParams, timestamp } from '../schemas.js';
import { isoTimestamp, isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'Schedules';

/** How many upcoming fire times and recent runs a schedule shows. */
const NEXT_FIRE_TIMES = 5;
const RECENT_RUNS = 10;

const idParams = pathParams(['id'], 200);
const scheduleOr404 = refOr404(findSchedule, 'schedule');
const lockedScheduleOr404 = refOr404(lockSchedule, 'schedule');

const cronSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description:
    'Five fields — minute hour day-of-month month day-of-week (`*`, values, `a-b` ranges, `/step`, lists; month and day names) — ' +
    'or `@yearly`, `@monthly`, `@weekly`, `@daily`, `@hourly`. Read in `time_zone`.',
};
const durationSchema = (what: string): JsonSchema => ({
  type: 'string',
  minLength: 2,
  maxLength: 40,
  pattern: DURATION_PATTERN,
  description: `${what}: \`30s\`, \`5m\`, \`1h30m\`, \`1d\` (units d, h, m, s, largest first) or ISO 8601 (\`PT1H30M\`).`,
});
const everySchema = durationSchema('An interval of at least 1s, counted from the Unix epoch (so `1h` fires on the hour, UTC)');
const jitterSchema = durationSchema('Each firing is delayed by a random amount up to this');
const timeZoneSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 100, description: 'An IANA time zone name (`UTC`, `Europe/Paris`) that `cron` is read in.' };
const overlapSchema: JsonSchema = {
  enum: ['skip', 'buffer_one', 'allow_all'],
  description:
    'When a firing comes while the previous run is still going (paused on a question included): `skip` it, run it after (`buffer_one`: ' +
    'one waits, later ones are skipped), or start it at once (`allow_all`).',
};
const inputSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 200_000 };
const descriptionSchema: JsonSchema = { type: ['string', 'null'], maxLength: 10_000 };

const scheduleSchema = closedObject({
  id: { type: 'string' },
  agent_id: { type: 'string' },
  input: { type: 'string' },
  thread_id: { type: ['string', 'null'], description: 'Every firing continues this thread; null: each starts a thread of its own.' },
  cron: { type: ['string', 'null'] },
  every: { type: ['string', 'null'] },
  time_zone: { type: 'string' },
  overlap: overlapSchema,
  jitter: { type: ['string', 'null'] },
  paused: { type: 'boolean' },
  description: { type: ['string', 'null'] },
  created_at: timestamp,
  updated_at: timestamp,
});

const scheduleDetailSchema = closedObject({
  ...(scheduleSchema.properties as Record<string, JsonSchema>),
  next_fire_times: { type: 'array', items: timestamp, description: `The next ${NEXT_FIRE_TIMES} times Temporal will fire it; empty while paused.` },
  recent_runs: {
    type: 'array',
    description: `Its ${RECENT_RUNS} most recent runs, newest first.`,
    items: closedObject({
      id: { type: 'string' },
      status: { enum: ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'] },
      thread_id: { type: 'string' },
      created_at: timestamp,
      ended_at: nullableTimestamp,
    }),
  },
  stats: {
    description: "Temporal's counts for the schedule; null when Temporal no longer has it (a delete that did not finish: delete it again).",
    anyOf: [
      { type: 'null' },
      closedObject({
        fired: { type: 'integer', description: 'Firings so far, triggers included.' },
        running: { type: 'integer', description: 'Firings whose run has not ended.' },
        skipped_overlap: { type: 'integer', description: 'Firings skipped because a run was still going (`overlap`).' },
        missed_catchup_window: { type: 'integer', description: 'Firings missed while the Temporal server was down for more than a minute.' },
      }),
    ],
  },
});
const scheduleBody = closedObject({ schedule: scheduleDetailSchema });

function scheduleJson(schedule: Schedule) {
  return {
    ...pick(schedule, ['id', 'agent_id', 'input', 'thread_id', 'cron', 'every', 'time_zone', 'overlap', 'jitter', 'paused', 'description']),
    ...timestampsJson(schedule),
  };
}

/** The schedule with what Temporal says of it (its next times, paused state and counts) and its recent runs. */
async function scheduleDetail({ deps, caller, tenant }: Pick<OperationContext<unknown, unknown, unknown>, 'deps' | 'caller' | 'tenant'>, schedule: Schedule) {
  const [described, runs] = await Promise.all([
    describeTemporalSchedule(deps.temporal, schedule.id),
    tenant((tx) => listScheduleRuns(tx, caller.tenantId, schedule.id, RECENT_RUNS)),
  ]);
  return {
    schedule: {
      ...scheduleJson(schedule),
      paused: described?.state.paused ?? schedule.paused,
      next_fire_times: described && !described.state.paused ? described.info.nextActionTimes.slice(0, NEXT_FIRE_TIMES).map((at) => isoTimestamp(at)) : [],
      recent_runs: runs.map((run) => ({ ...pick(run, ['id', 'status', 'thread_id']), created_at: isoTimestamp(run.created_at), ended_at: isoTimestampOrNull(run.ended_at) })),
      stats: described ? statsJson(described) : null,
    },
  };
}

function statsJson({ info }: ScheduleDescription) {
  return {
    fired: info.numActionsTaken,
    running: info.runningActions.length,
    skipped_overlap: info.numActionsSkippedOverlap,
    missed_catchup_window: info.numActionsMissedCatchupWindow,
  };
}

interface ScheduleFields {
  agent?: string;
  input?: string;
  thread_id?: string | null;
  cron?: string;
  every?: string;
  time_zone?: string;
  overlap?: ScheduleOverlap;
  jitter?: string | null;
  description?: string | null;
}

/** The timing fields' own checks (activities/schedules/spec.ts): every problem at once, before anything is read or written. */
function checkTiming(body: ScheduleFields, creating: boolean): void {
  const fields: FieldError[] = [];
  if (body.cron !== undefined && body.every !== undefined) fields.push({ field: 'body.every', message: 'give either cron or every, not both' });
  else if (creating && body.cron === undefined && body.every === undefined) fields.push({ field: 'body.cron', message: 'give cron or every' });
  const checks: Array<[keyof ScheduleFields, (value: string) => string | undefined]> = [
    ['cron', cronProblem],
    ['every', everyProblem],
    ['jitter', jitterProblem],
    ['time_zone', timeZoneProblem],
  ];
  for (const [field, problemOf] of checks) {
    const value = body[field];
    const problem = typeof value === 'string' ? problemOf(value) : undefined;
    if (problem) fields.push({ field: `body.${field}`, message: problem });
  }
  if (fields.length > 0) throw invalidRequest(fields.map((f) => `${f.field}: ${f.message}`).join('; '), fields);
}

/**
 * `allow_all` starts a firing while the previous one runs: on one thread their turns would interleave in
 * its history, so a schedule that continues a thread runs one firing at a time.
 */
function checkOverlapOnThread(definition: ScheduleDefinition): void {
  if (definition.overlap === 'allow_all' && definition.threadId !== null) {
    throw invalidRequest('overlap allow_all cannot continue a thread: its firings would run side by side on it', [
      { field: 'body.overlap', message: "allow_all is refused with a thread_id (use 'skip' or 'buffer_one')" },
    ]);
  }
}

/**
 * The agent and thread of a definition, checked in the workspace: an agent that is not there, or a thread
 * that is not one of the agent's, is the request's mistake (400); an agent with nothing published cannot
 * run (409, as for POST /v1/agents/{id}/runs) — judged only when the schedule gets this agent
 * (`keptAgentId`: the agent a PATCH leaves in place, whose edits of other fields stay possible).
 */
async function resolveAgentAndThread(tx: TenantTx, tenantId: string, agentRef: string, threadId: string | null, keptAgentId?: string): Promise<string> {
  const agent = await findAgent(tx, tenantId, agentRef);
  if (!agent) throw invalidRequest(`agent '${agentRef}' not found`, [{ field: 'body.agent', message: 'no agent of the workspace has this id or name' }]);
  if (agent.published_version === null && agent.id !== keptAgentId) {
    throw new ApiError('conflict', `agent '${agentRef}' has no published version; POST /v1/agents/{id}/versions first`);
  }
  if (threadId !== null && !(await findThread(tx, tenantId, agent.id, threadId))) {
    throw invalidRequest(`thread '${threadId}' is not a thread of agent '${agentRef}'`, [{ field: 'body.thread_id', message: "not one of the agent's threads" }]);
  }
  return agent.id;
}

/** Temporal's refusal of a spec that passed the checks above: still the request's, and nothing is kept. */
function temporalSpecRefusal(err: unknown): never {
  if (isTemporalSpecRefusal(err)) {
    // A zone Node knows and the server's tz database does not (`unknown time zone …`): a link since dropped.
    const field = /\bunknown time zone\b/i.test(err.message) ? 'body.time_zone' : 'body';
    throw invalidRequest(`Temporal refused the schedule: ${err.message}`, [{ field, message: err.message }]);
  }
  throw temporalScheduleGone(err);
}

/** A row whose Temporal Schedule is gone (a delete that did not finish) can only be deleted. */
function temporalScheduleGone(err: unknown): unknown {
  if (err instanceof ScheduleNotFoundError) return new ApiError('conflict', 'the Temporal Schedule of this schedule is gone (a delete did not finish); DELETE it again');
  return err;
}

export const listSchedules = defineOperation<Record<string, never>, PageQuery & { agent?: string }>({
  operationId: 'listSchedules',
  method: 'get',
  path: '/v1/schedules',
  tag: TAG,
  summary: "The workspace's schedules, oldest first (definitions; GET one for its next fire times and runs)",
  access: 'key',
  query: {
    ...pageQuery,
    properties: {
      ...(pageQuery.properties as object),
      agent: { type: 'string', minLength: 1, description: "Only this agent's schedules (id or name); one that names no agent gives an empty list." },
    },
  },
  responses: { 200: { description: 'A page of schedules', schema: listOf('schedules', scheduleSchema) } },
  handler: async ({ query, caller, tenantReads }) => {
    const { items, nextCursor } = await tenantReads(async (reader) => {
      const agent = query.agent ? await findAgent(reader, caller.tenantId, query.agent) : undefined;
      if (query.agent && !agent) return { items: [], nextCursor: null };
      return listSchedulesPage(reader, caller.tenantId, { agentId: agent?.id }, query);
    });
    return { status: 200, body: { schedules: items.map(scheduleJson), next_cursor: nextCursor } };
  },
});

export const createSchedule = defineOperation<Record<string, never>, unknown, ScheduleFields & { agent: string; input: string; paused?: boolean }>({
  operationId: 'createSchedule',
  method: 'post',
  path: '/v1/schedules',
  tag: TAG,
  summary: 'Run an agent on a cron expression or an interval (a Temporal Schedule)',
  description:
    'Exactly one of `cron` and `every`. Each firing runs the agent\'s published version with `input` (`source: "schedule"`). ' +
    'An invalid cron, interval, jitter or time zone, an unknown agent or a thread that is not the agent\'s is a 400, and nothing is created. ' +
    `A workspace may have ${SCHEDULES_PER_TENANT} schedules; creating one more is a 409 (\`conflict\`) until one is deleted.`,
  access: 'key',
  body: closedObject(
    {
      agent: { type: 'string', minLength: 1, maxLength: 200, description: 'The agent to run (id or name).' },
      input: inputSchema,
      thread_id: { type: 'string', minLength: 1, maxLength: 200 },
      cron: cronSchema,
      every: everySchema,
      time_zone: { ...timeZoneSchema, default: 'UTC' },
      overlap: { ...overlapSchema, default: 'skip' },
      jitter: jitterSchema,
      paused: { type: 'boolean', default: false, description: 'Create it paused.' },
      description: descriptionSchema,
    },
    { required: ['agent', 'input'] },
  ),
  errors: ['conflict'],
  responses: { 201: { description: 'Created', schema: scheduleBody } },
  handler: async (ctx) => {
    const { body, caller, tenant, deps } = ctx;
    checkTiming(body, true);
    let createdInTemporal: string | undefined;
    let schedule: Schedule;
    try {
      schedule = await tenant(async (tx) => {
        const agentId = await resolveAgentAndThread(tx, caller.tenantId, body.agent, body.thread_id ?? null);
        const definition: ScheduleDefinition = {
          agentId,
          input: body.input,
          threadId: body.thread_id ?? null,
          cron: body.cron?.trim() ?? null,
          every: body.every ?? null,
          timeZone: body.time_zone ?? 'UTC',
          overlap: body.overlap ?? 'skip',
          jitter: body.jitter ?? null,
          description: body.description ?? null,
        };
        checkOverlapOnThread(definition);
        if (!(await hasRoomForSchedule(tx, caller.tenantId))) {
          throw new ApiError('conflict', `the workspace already has ${SCHEDULES_PER_TENANT} schedules, the most it may have; delete one first`);
        }
        const row = await insertSchedule(tx, caller.tenantId, definition, body.paused ?? false);
        // Set before the call: a call that fails after the server acted (a timeout) must be taken back too.
        createdInTemporal = row.id;
        // Inside the transaction: a refusal by Temporal leaves no row.
        await createTemporalSchedule(deps.temporal, caller.tenantId, row).catch(temporalSpecRefusal);
        return row;
      });
    } catch (err) {
      // Temporal may have taken it (the commit failed, or the call failed ambiguously): take it back, so
      // neither side keeps half a schedule. Deleting one Temporal never made is fine.
      if (createdInTemporal) await deleteTemporalSchedule(deps.temporal, createdInTemporal).catch((cleanup) => console.error('[api] schedule cleanup:', cleanup));
      throw err;
    }
    return { status: 201, body: await scheduleDetail(ctx, schedule) };
  },
});

export const getSchedule = defineOperation<{ id: string }>({
  operationId: 'getSchedule',
  method: 'get',
  path: '/v1/schedules/{id}',
  tag: TAG,
  summary: 'A schedule with its next fire times, paused state and counts from Temporal, and its recent runs',
  access: 'key',
  params: idParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The schedule', schema: scheduleBody } },
  handler: async (ctx) => {
    const schedule = await ctx.tenantReads((reader) => scheduleOr404(reader, ctx.caller.tenantId, ctx.params.id));
    return { status: 200, body: await scheduleDetail(ctx, schedule) };
  },
});

export const updateScheduleOperation = defineOperation<{ id: string }, unknown, ScheduleFields>({
  operationId: 'updateSchedule',
  method: 'patch',
  path: '/v1/schedules/{id}',
  tag: TAG,
  summary: "Change a schedule's definition; Temporal's schedule changes with it",
  description:
    '`cron` replaces an `every` and the other way round. Pause and unpause have operations of their own. ' +
    'Changing `agent` needs an agent with a published version (409 otherwise); other edits do not.',
  access: 'key',
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      agent: { type: 'string', minLength: 1, maxLength: 200 },
      input: inputSchema,
      thread_id: { type: ['string', 'null'], minLength: 1, maxLength: 200 },
      cron: cronSchema,
      every: everySchema,
      time_zone: timeZoneSchema,
      overlap: overlapSchema,
      jitter: { ...jitterSchema, type: ['string', 'null'] },
      description: descriptionSchema,
    },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The updated schedule', schema: scheduleBody } },
  handler: async (ctx) => {
    const { body, params, caller, tenant, deps } = ctx;
    checkTiming(body, false);
    let before: Schedule | undefined;
    let schedule: Schedule;
    try {
      schedule = await tenant(async (tx) => {
        const current = await lockedScheduleOr404(tx, caller.tenantId, params.id);
        const threadId = body.thread_id !== undefined ? body.thread_id : current.thread_id;
        const agentId = await resolveAgentAndThread(tx, caller.tenantId, body.agent ?? current.agent_id, threadId, current.agent_id);
        const definition: ScheduleDefinition = {
          ...scheduleDefinition(current),
          agentId,
          threadId,
          ...(body.input !== undefined && { input: body.input }),
          ...(body.cron !== undefined && { cron: body.cron.trim(), every: null }),
          ...(body.every !== undefined && { every: body.every, cron: null }),
          ...(body.time_zone !== undefined && { timeZone: body.time_zone }),
          ...(body.overlap !== undefined && { overlap: body.overlap }),
          ...(body.jitter !== undefined && { jitter: body.jitter }),
          ...(body.description !== undefined && { description: body.description }),
        };
        checkOverlapOnThread(definition);
        const updated = await updateSchedule(tx, caller.tenantId, current.id, definition);
        // Set before the call: a call that fails after the server acted (a timeout) must be undone too.
        before = current;
        await updateTemporalSchedule(deps.temporal, caller.tenantId, updated).catch(temporalSpecRefusal);
        return updated;
      });
    } catch (err) {
      // Temporal may have taken the change (the commit failed, or the call failed ambiguously): put its
      // schedule back as the row still has it; re-applying the old definition is harmless.
      if (before) await updateTemporalSchedule(deps.temporal, caller.tenantId, before).catch((undo) => console.error('[api] schedule undo:', undo));
      throw err;
    }
    return { status: 200, body: await scheduleDetail(ctx, schedule) };
  },
});

export const deleteSchedule = defineOperation<{ id: string }>({
  operationId: 'deleteSchedule',
  method: 'delete',
  path: '/v1/schedules/{id}',
  tag: TAG,
  summary: 'Delete a schedule and its Temporal Schedule (a run already going finishes; its runs stay)',
  access: 'key',
  params: idParams,
  errors: ['not_found'],
  responses: { 200: { description: 'Deleted', schema: deletionResult } },
  handler: async ({ params, caller, tenant, deps }) => {
    const id = await tenant(async (tx) => {
      const schedule = await lockedScheduleOr404(tx, caller.tenantId, params.id);
      // Temporal first: were the row's delete to fail, a second DELETE finishes the job (Temporal's "not found" is fine).
      await deleteTemporalSchedule(deps.temporal, schedule.id);
      await deleteScheduleById(tx, caller.tenantId, schedule.id);
      return schedule.id;
    });
    return { status: 200, body: { deleted: true, id } };
  },
});

/** Pause and unpause: Temporal's state, mirrored in the row. */
function pauseOperation(operationId: 'pauseSchedule' | 'unpauseSchedule', paused: boolean) {
  return defineOperation<{ id: string }>({
    operationId,
    method: 'post',
    path: `/v1/schedules/{id}/${paused ? 'pause' : 'unpause'}`,
    tag: TAG,
    summary: paused ? 'Stop firing until unpaused (a run already going finishes)' : 'Fire again on the schedule',
    access: 'key',
    params: idParams,
    errors: ['not_found', 'conflict'],
    responses: { 200: { description: `The ${paused ? 'paused' : 'unpaused'} schedule`, schema: scheduleBody } },
    handler: async (ctx) => {
      const { params, caller, tenant, deps } = ctx;
      const schedule = await tenant(async (tx) => {
        const current = await lockedScheduleOr404(tx, caller.tenantId, params.id);
        const updated = await setSchedulePaused(tx, caller.tenantId, current.id, paused);
        const handle = deps.temporal.schedule.getHandle(current.id);
        await (paused ? handle.pause('paused through the API') : handle.unpause('unpaused through the API')).catch((err: unknown) => {
          throw temporalScheduleGone(err);
        });
        return updated;
      });
      return { status: 200, body: await scheduleDetail(ctx, schedule) };
    },
  });
}

export const pauseSchedule = pauseOperation('pauseSchedule', true);
export const unpauseSchedule = pauseOperation('unpauseSchedule', false);

export const triggerSchedule = defineOperation<{ id: string }>({
  operationId: 'triggerSchedule',
  method: 'post',
  path: '/v1/schedules/{id}/trigger',
  tag: TAG,
  summary: 'Fire the schedule once now, paused or not, whatever its overlap policy',
  description: 'The run appears in `recent_runs` once the firing has made it. Counted by the per-key run limit (60 per 60 s), as starting a run is.',
  access: 'key',
  params: idParams,
  errors: ['not_found', 'conflict', 'rate_limited'],
  responses: { 202: { description: 'Temporal fires it now', schema: closedObject({ schedule_id: { type: 'string' }, triggered: { const: true } }) } },
  handler: async ({ params, caller, tenant, deps }) => {
    // Each trigger starts a run: counted as POST /v1/agents/{id}/runs is, in a transaction of its own so refused requests count too.
    const rateHeaders = await takeRateLimitTokenNow(deps.db, caller.tenantId, caller.keyId, RUN_RATE_LIMIT);
    const schedule = await tenant((tx) => scheduleOr404(tx, caller.tenantId, params.id));
    await deps.temporal.schedule
      .getHandle(schedule.id)
      .trigger()
      .catch((err: unknown) => {
        throw temporalScheduleGone(err);
      });
    return { status: 202, body: { schedule_id: schedule.id, triggered: true }, headers: rateHeaders };
  },
});

export default [listSchedules, createSchedule, getSchedule, updateScheduleOperation, deleteSchedule, pauseSchedule, unpauseSchedule, triggerSchedule];
