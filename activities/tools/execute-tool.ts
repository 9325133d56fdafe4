import { Context } from '@temporalio/activity';
import type { Db } from '../../db/database.js';
import { findKnowledgeBase } from '../../db/knowledge-bases.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { findToolConnection } from '../../db/tools.js';
import type { ActivityDeps } from '../deps.js';
import { searchKnowledge } from '../knowledge/search.js';
import { searchMemory, writeMemory } from '../memory/memory.js';
import type { StepInput, StepOutcome } from '../runs/types.js';
import { beginStep, completeStep } from '../runs/steps.js';
import type { ActivityToolContext } from './builtins/definition.js';
import { builtinTool } from './builtins/registry.js';
import { callBrowserTool } from './browser-tool.js';
import { callHttpTool } from './http-tool.js';
import { callMcpTool } from './mcp-tool.js';
import type { HttpToolConfig, McpToolConfig } from './types.js';

const HEARTBEAT_EVERY_MS = 1000;

type ToolDeps = Pick<ActivityDeps, 'outboundPolicy' | 'embedder'>;

/**
 * Runs one tool call that needs I/O (an activity built-in, http, mcp, browser)
 * and records it as a step. A failing tool is an answer, not an activity failure: the model sees the
 * error and the step is stored as failed. A step an earlier attempt already ended (its worker died
 * before reporting it) answers what was recorded: the call is not made again, and the run goes on with
 * the outcome its log shows.
 */
export async function executeTool(db: Db, deps: ToolDeps, step: StepInput): Promise<StepOutcome> {
  const context = Context.current();
  const ended = await beginStep(db, step);
  if (ended) return ended;
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  let outcome: StepOutcome;
  try {
    outcome = { ok: true, result: await run(db, deps, step, context.cancellationSignal) };
  } catch (err) {
    if (context.cancellationSignal.aborted) throw err;
    outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearInterval(heartbeat);
  }
  await completeStep(db, step, outcome);
  return outcome;
}

async function run(db: Db, deps: ToolDeps, step: StepInput, signal: AbortSignal): Promise<unknown> {
  const { tool, call } = step;
  const policy = deps.outboundPolicy;
  if (!tool) throw new Error(`unknown tool '${call.tool}': this node has no tool by that name`);
  switch (tool.kind) {
    case 'builtin': {
      const builtin = builtinTool(tool.builtin);
      if (builtin?.runsIn === 'activity') return builtin.run(call.arguments, activityToolContext(db, deps, step.tenantId, signal));
      throw new Error(`the built-in tool '${tool.builtin}' cannot run as an activity`);
    }
    case 'http':
      return callHttpTool((await toolConfig(db, step)).http as unknown as HttpToolConfig, call.arguments, { signal, policy });
    case 'mcp':
      return callMcpTool((await toolConfig(db, step)).mcp as unknown as McpToolConfig, call.arguments, { signal, policy });
    case 'browser':
      return callBrowserTool(db, step.tenantId, (await toolConfig(db, step)).browser ?? {}, call.arguments, { signal, policy });
    case 'agent':
      throw new Error(`the subagent tool '${tool.name}' runs in the workflow, as a child run`);
  }
}

/** What the activity built-ins reach, bound to the run's tenant. */
function activityToolContext(db: Db, deps: ToolDeps, tenantId: string, signal: AbortSignal): ActivityToolContext {
  return {
    signal,
    writeMemory: (content) => writeMemory(db, deps.embedder(), tenantId, content),
    searchMemory: (query, k) => searchMemory(db, deps.embedder(), tenantId, query, k),
    findKnowledgeBase: async (ref) => (await withTenant(db, tenantId, (tx) => findKnowledgeBase(tx, tenantId, ref)))?.id,
    searchKnowledge: ({ query, kbId, k }) => searchKnowledge(db, deps.embedder(), tenantId, { query, kbId, k, mode: 'vector', hops: 1 }),
  };
}

/** HTTP, MCP and browser settings are read at call time rather than carried in the history: headers may hold secrets. */
async function toolConfig(db: Db, step: StepInput) {
  const connection = await withTenant(db, step.tenantId, (tx) => findToolConnection(tx, step.tenantId, step.tool!.id));
  if (!connection) throw new Error(`the tool '${step.call.tool}' is no longer in the catalog`);
  return connection;
}
