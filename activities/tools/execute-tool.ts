import { Context } from '@temporalio/activity';
import type { Db } from '../../db/database.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { BUILTIN_TOOLS, isBuiltinKey } from './builtin-tools.js';
import type { StepInput, StepOutcome } from '../runs/types.js';
import { beginStep, completeStep } from '../runs/steps.js';
import { evaluateExpression } from './calculator.js';
import { callHttpTool } from './http-tool.js';
import { callMcpTool } from './mcp-tool.js';
import type { HttpToolConfig, McpToolConfig, OutboundPolicy } from './types.js';
import type { Embedder } from '../embedding/index.js';
import { MAX_KNOWLEDGE_K, searchKnowledge } from '../knowledge/search.js';
import { searchMemory, writeMemory } from '../memory/memory.js';

const HEARTBEAT_EVERY_MS = 1000;

/**
 * Runs one tool call that needs I/O (calculator, http, mcp, and built-ins not available yet) and records
 * it as a step. A failing tool is an answer, not an activity failure: the model sees the error and the
 * step is stored as failed.
 */
export async function executeTool(db: Db, deps: ToolDeps, step: StepInput): Promise<StepOutcome> {
  const context = Context.current();
  await beginStep(db, step);
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
      const args = call.arguments;
      switch (tool.builtin) {
        case 'calculator':
          return { result: evaluateExpression(requireString(args, 'expression')) };
        case 'memory_write':
          return { id: (await writeMemory(db, deps.embedder(), step.tenantId, requireString(args, 'content'))).id };
        case 'memory_search':
          return { hits: await searchMemory(db, deps.embedder(), step.tenantId, requireString(args, 'query'), toolK(args)) };
        case 'knowledge_search':
          return { hits: await knowledgeSearchTool(db, deps, step.tenantId, args) };
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

export interface ToolDeps {
  outboundPolicy: OutboundPolicy;
  embedder: () => Embedder;
}

function requireString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || !value) throw new Error(`this tool needs a string "${name}"`);
  return value;
}

function toolK(args: Record<string, unknown>): number {
  return typeof args.k === 'number' && Number.isInteger(args.k) ? Math.min(Math.max(args.k, 1), MAX_KNOWLEDGE_K) : 5;
}

/** `knowledge_search(query, k?, kb?)`: the top chunks, as the model is best served by them. */
async function knowledgeSearchTool(db: Db, deps: ToolDeps, tenantId: string, args: Record<string, unknown>) {
  let kbId: string | undefined;
  if (typeof args.kb === 'string') {
    const kb = await withTenant(db, tenantId, (tx) => tx.selectFrom('knowledge_bases').select('id').where('name', '=', args.kb as string).executeTakeFirst());
    if (!kb) throw new Error(`no knowledge base named '${args.kb}'`);
    kbId = kb.id;
  }
  const hits = await searchKnowledge(db, deps.embedder(), tenantId, { query: requireString(args, 'query'), kbId, k: toolK(args), mode: 'vector', hops: 1 });
  return hits.map((h) => ({ content: h.content, document_id: h.document_id, title: h.title, kb: h.kb, similarity: h.similarity }));
}

/** HTTP and MCP settings are read at call time rather than carried in the history: headers may hold secrets. */
async function toolConfig(db: Db, step: StepInput) {
  return withTenant(db, step.tenantId, (tx) =>
    tx.selectFrom('tools').select(['http', 'mcp']).where('id', '=', step.tool!.id).executeTakeFirstOrThrow(),
  );
}
