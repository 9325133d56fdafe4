import { Context } from '@temporalio/activity';
import type { Db } from '../db/database.js';
import { withTenant } from '../db/tenant.js';
import { BUILTIN_TOOLS, isBuiltinKey } from './builtin-tools.js';
import type { StepInput, StepOutcome } from './run-types.js';
import { beginStep, completeStep } from './steps.js';
import { evaluateExpression } from './tools/calculator.js';
import { callHttpTool } from './tools/http-tool.js';
import { callMcpTool } from './tools/mcp-tool.js';
import type { HttpToolConfig, McpToolConfig, OutboundPolicy } from './tools/types.js';

const HEARTBEAT_EVERY_MS = 1000;

/**
 * Runs one tool call that needs I/O (calculator, http, mcp, and built-ins not available yet) and records
 * it as a step. A failing tool is an answer, not an activity failure: the model sees the error and the
 * step is stored as failed.
 */
export async function executeTool(db: Db, policy: OutboundPolicy, step: StepInput): Promise<StepOutcome> {
  const context = Context.current();
  await beginStep(db, step);
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  let outcome: StepOutcome;
  try {
    outcome = { ok: true, result: await run(db, policy, step, context.cancellationSignal) };
  } catch (err) {
    if (context.cancellationSignal.aborted) throw err;
    outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearInterval(heartbeat);
  }
  await completeStep(db, step, outcome);
  return outcome;
}

async function run(db: Db, policy: OutboundPolicy, step: StepInput, signal: AbortSignal): Promise<unknown> {
  const { tool, call } = step;
  if (!tool) throw new Error(`unknown tool '${call.tool}': this node has no tool by that name`);
  switch (tool.kind) {
    case 'builtin': {
      if (tool.builtin === 'calculator') {
        const expression = call.arguments.expression;
        if (typeof expression !== 'string') throw new Error('calculator needs a string "expression"');
        return { result: evaluateExpression(expression) };
      }
      const known = tool.builtin && isBuiltinKey(tool.builtin) ? BUILTIN_TOOLS[tool.builtin] : undefined;
      if (known?.runsIn === 'unavailable') {
        throw new Error(`the built-in tool '${tool.builtin}' is not available yet on this platform`);
      }
      throw new Error(`the built-in tool '${tool.builtin}' cannot run as an activity`);
    }
    case 'http':
      return callHttpTool((await toolConfig(db, step)).http as unknown as HttpToolConfig, call.arguments, { signal, policy });
    case 'mcp':
      return callMcpTool((await toolConfig(db, step)).mcp as unknown as McpToolConfig, call.arguments, { signal, policy });
  }
}

/** HTTP and MCP settings are read at call time rather than carried in the history: headers may hold secrets. */
async function toolConfig(db: Db, step: StepInput) {
  return withTenant(db, step.tenantId, (tx) =>
    tx.selectFrom('tools').select(['http', 'mcp']).where('id', '=', step.tool!.id).executeTakeFirstOrThrow(),
  );
}
