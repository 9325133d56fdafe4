import { Decimal } from 'decimal.js';
import { agentRunFailure } from '../../workflows/agent-run-api.js';
import type { Db } from '../../db/database.js';
import { findAgent } from '../../db/agents.js';
import { appendRunEvents } from '../../db/run-events.js';
import { createQueuedRun, findChildRun, findRun, lockChildRuns, recordRunEnd, type RunSource } from '../../db/runs.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import type { Run, Tool } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { DEFAULT_SUBAGENT_MAX_DEPTH } from '../tools/config-schemas.js';
import { beginStep } from './steps.js';
import type { PlanTool, StepInput } from './types.js';

/**
 * Subagents: a tool of kind `agent` runs another agent of the workspace as a child run of the calling
 * run (docs/subagents.md). The workflow side is in workflows/agent-run.ts; this is what needs the database.
 */

/** What the model is shown of a subagent tool: one `input`, the child run's input. */
export function subagentPlanTool(tool: Tool): PlanTool {
  const config = tool.agent!;
  return {
    id: tool.id,
    name: tool.name,
    kind: tool.kind,
    builtin: null,
    description: tool.description ?? `Ask the agent '${config.agent}' to do something; it answers with its final text.`,
    parameters: {
      type: 'object',
      required: ['input'],
      properties: { input: { type: 'string', description: "The task or question for the agent: its run's input." } },
    },
    agent: config,
  };
}

export type SubagentRunStart =
  | { ok: true; runId: string; agentId: string; source: string }
  /** Nothing was started; the calling step fails with this, and the model sees it. */
  | { ok: false; error: string };

/**
 * Begins the calling step and records the child run (queued, in a thread of its own, with the parent's
 * `source`), or says why it cannot start: the depth limit, an agent that no longer exists, no published
 * or no such version. One activity for both: each is a round trip to Temporal. A retried call finds the
 * child it already made by the step's index.
 */
export async function startSubagentRun(db: Db, step: StepInput): Promise<SubagentRunStart> {
  await beginStep(db, step);
  const tool = step.tool!;
  const config = tool.agent;
  if (!config) throw new Error(`tool '${tool.name}' is not a subagent tool`);
  const text = step.call.arguments.input;
  if (typeof text !== 'string' || text.length === 0) return { ok: false, error: `the tool '${tool.name}' needs an "input" string` };

  const input = { tenantId: step.tenantId, runId: step.runId, step: step.index };
  return withTenant(db, input.tenantId, async (tx) => {
    const existing = await findChildRun(tx, input.tenantId, input.runId, input.step);
    if (existing) return { ok: true, runId: existing.id, agentId: existing.agent_id, source: existing.source };

    const parent = await findRun(tx, input.tenantId, input.runId);
    if (!parent) throw agentRunFailure('RunMissing', `run ${input.runId} does not exist`);
    const maxDepth = config.max_depth ?? DEFAULT_SUBAGENT_MAX_DEPTH;
    if (parent.depth + 1 > maxDepth) {
      return { ok: false, error: `subagent depth limit reached: this run is ${parent.depth} level(s) below the run a client started, and '${tool.name}' allows ${maxDepth}` };
    }
    const agent = await findAgent(tx, input.tenantId, config.agent);
    if (!agent) return { ok: false, error: `the agent '${config.agent}' does not exist (any more)` };

    const queued = await createQueuedRun(tx, {
      tenantId: input.tenantId,
      agentId: agent.id,
      input: text,
      source: parent.source as RunSource,
      pinnedVersion: config.version,
      parent: { runId: parent.id, step: input.step, depth: parent.depth + 1 },
    });
    if (!queued.queued) {
      const why = queued.reason === 'unknown_version' ? `has no version ${config.version}` : 'has no published version';
      return { ok: false, error: `the agent '${agent.name}' ${why}` };
    }
    return { ok: true, runId: queued.runId, agentId: agent.id, source: parent.source };
  });
}

type RunUsage = Pick<Run, 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'cost_usd'>;
/** What a parent adds of a subagent run's usage (its total is the parent's own sum). */
type ChildUsage = Pick<Run, 'prompt_tokens' | 'completion_tokens' | 'cost_usd'>;

/**
 * A run's own usage plus its subagents' (which include theirs): what the parent's totals show. As
 * everywhere, one unknown part makes the sum unknown (null), not smaller.
 */
export function withSubagentUsage<U extends RunUsage>(own: U, children: ChildUsage[]): U {
  const plus = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);
  let { prompt_tokens, completion_tokens, cost_usd } = own;
  for (const child of children) {
    prompt_tokens = plus(prompt_tokens, child.prompt_tokens);
    completion_tokens = plus(completion_tokens, child.completion_tokens);
    cost_usd = cost_usd === null || child.cost_usd === null ? null : new Decimal(cost_usd).plus(child.cost_usd).toFixed();
  }
  const total_tokens = prompt_tokens === null || completion_tokens === null ? null : prompt_tokens + completion_tokens;
  return { ...own, prompt_tokens, completion_tokens, total_tokens, cost_usd };
}

/**
 * The usage of the subagent runs a run recorded, once those it never started are ended as cancelled (a
 * parent cancelled between recording its child and starting its workflow): they spent nothing, so their
 * usage is zero, and no run is left queued for good. One read for both.
 */
export async function settleSubagents(tx: TenantTx, tenantId: string, parentRunId: string): Promise<ChildUsage[]> {
  const zero = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: '0' };
  const children = await lockChildRuns(tx, tenantId, parentRunId);
  for (const child of children.filter((run) => run.status === 'queued')) {
    const { durationMs } = await recordRunEnd(tx, tenantId, child.id, { status: 'cancelled', output: null, error: null, usage: zero });
    await appendRunEvents(tx, tenantId, child.id, [{ type: 'run.cancelled', dedupeKey: 'run.end', data: { usage: { ...zero, duration_ms: durationMs } } }]);
  }
  return children.map((child) => (child.status === 'queued' ? zero : child));
}
