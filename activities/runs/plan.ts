import { agentRunFailure } from '../../workflows/agent-run-api.js';
import { listAllGuardrails } from '../../db/guardrails.js';
import { findPromptByName, findPromptVersion } from '../../db/prompts.js';
import { listRecentCompletedRunsWithin } from '../../db/runs.js';
import { MAX_CONVERSATION_CHARS } from '../../workflows/conversation-budget.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { findToolsByRef } from '../../db/tools.js';
import type { AgentGraph, Tool } from '../../db/schema.js';
import { builtinTool } from '../tools/builtins/registry.js';
import { browserToolArgumentsSchema } from '../tools/config-schemas.js';
import { checkNodeLimits, resolveNodeSkills } from './skills.js';
import { subagentPlanTool } from './subagents.js';
import { isVersionNumber } from './version-number.js';
import { MAX_REQUEST_INTEGER } from '../json-schema/types.js';
import type { ChatMessage, PlanNode, PlanTool } from './types.js';
import type { ScriptTurn } from '../models/types.js';
import { renderTemplate } from '../prompts/template.js';
import type { RunPromptUse } from '../../db/schema.js';
import type { Guardrail } from '../guardrails/index.js';

export const DEFAULT_MAX_TURNS = 20;

/** The most nodes a graph may have: each is resolved (its prompt, skills and tools read) when a run starts. */
export const MAX_GRAPH_NODES = 256;

/**
 * How a graph runs (docs/runs.md): execution starts at `entry` (default: the first node) and follows
 * `edges` (`[{"from": "a", "to": "b"}]`, at most one edge out of a node, no cycles). Each node is an
 * agent loop of model turns and tool calls; its final text is the next node's input, and the last
 * node's text is the run's output.
 */
export async function resolveNodes(tx: TenantTx, tenantId: string, graph: AgentGraph): Promise<PlanNode[]> {
  // The API refuses a larger graph; one stored before that bound fails here, before anything is read.
  if (graph.nodes.length > MAX_GRAPH_NODES) invalid(`the graph has ${graph.nodes.length} nodes; at most ${MAX_GRAPH_NODES} are allowed`);
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const next = new Map<string, string>();
  for (const edge of asEdges(graph.edges)) {
    if (!byId.has(edge.from) || !byId.has(edge.to)) invalid(`edge ${edge.from} → ${edge.to} names a node that does not exist`);
    if (next.has(edge.from)) invalid(`node '${edge.from}' has more than one outgoing edge`);
    next.set(edge.from, edge.to);
  }
  const entry = typeof graph.entry === 'string' ? graph.entry : graph.nodes[0]!.id;
  if (!byId.has(entry)) invalid(`entry node '${entry}' does not exist`);

  // A set, not the list, answers "seen?": a graph of thousands of nodes is checked in linear time.
  const order = new Set<string>();
  for (let id: string | undefined = entry; id !== undefined; id = next.get(id)) {
    if (order.has(id)) invalid(`the edges form a cycle through node '${id}'`);
    order.add(id);
  }

  const tools = await findToolsByRef(tx, tenantId, [...new Set([...order].flatMap((id) => byId.get(id)!.toolRefs ?? []))]);

  const nodes: PlanNode[] = [];
  let skillBytes = 0;
  for (const id of order) {
    const node = byId.get(id)!;
    const prompt = node.prompt === undefined ? null : await resolvePrompt(tx, tenantId, id, node.prompt);
    if (prompt && typeof node.system === 'string') invalid(`node '${id}' has both "prompt" and "system"; use one`);
    const model = typeof node.model === 'string' && node.model ? node.model : prompt?.model;
    if (!model) invalid(`node '${id}' has no "model" (nor a prompt with a default model)`);
    const nodeTools = (node.toolRefs ?? []).map((ref) => {
      const tool = tools.get(ref);
      if (!tool) invalid(`node '${id}' refers to tool '${ref}', which is not in the catalog`);
      return planTool(tool!);
    });
    const skills = node.skills === undefined ? null : await resolveNodeSkills(tx, tenantId, id, node.skills, nodeTools, planTool);
    const planNode: PlanNode = {
      id,
      model: model!,
      system: prompt?.text ?? (typeof node.system === 'string' ? node.system : null),
      prompt: prompt?.use ?? null,
      script: Array.isArray(node.script) ? (node.script as ScriptTurn[]) : null,
      temperature: typeof node.temperature === 'number' ? node.temperature : null,
      maxTurns: typeof node.max_turns === 'number' ? node.max_turns : DEFAULT_MAX_TURNS,
      tools: skills?.tools ?? nodeTools,
      ...(skills?.skills.length ? { skills: skills.skills } : {}),
    };
    skillBytes = checkNodeLimits(planNode, skillBytes);
    nodes.push(planNode);
  }
  return nodes;
}

/**
 * A node's `prompt`: a prompt name (its current version), or `{"name", "version", "variables"}` to pin a
 * version and fill the template. The rendered text is the node's system prompt; the prompt's model is
 * the node's default model.
 */
async function resolvePrompt(tx: TenantTx, tenantId: string, nodeId: string, ref: unknown): Promise<{ text: string; model: string | null; use: RunPromptUse }> {
  const spec = typeof ref === 'string' ? { name: ref } : (ref as { name?: unknown; version?: unknown; variables?: unknown });
  if (typeof spec?.name !== 'string') invalid(`node '${nodeId}': "prompt" must be a prompt name or {"name", "version", "variables"}`);
  if (spec.version !== undefined && !isVersionNumber(spec.version)) invalid(`node '${nodeId}': prompt "version" must be an integer from 1 to ${MAX_REQUEST_INTEGER}`);
  const variables = (spec.variables ?? {}) as Record<string, unknown>;
  if (typeof variables !== 'object' || Array.isArray(variables)) invalid(`node '${nodeId}': prompt "variables" must be an object`);

  const prompt = await findPromptByName(tx, tenantId, spec.name as string);
  if (!prompt) invalid(`node '${nodeId}' uses prompt '${spec.name}', which does not exist`);
  const version = (spec.version as number | undefined) ?? prompt!.version;
  const row = await findPromptVersion(tx, tenantId, prompt!.id, version);
  if (!row) invalid(`node '${nodeId}' pins version ${version} of prompt '${prompt!.name}', which has no such version`);
  let text: string;
  try {
    text = renderTemplate(row!.template, variables);
  } catch (err) {
    invalid(`node '${nodeId}', prompt '${prompt!.name}' v${version}: ${(err as Error).message}`);
  }
  return { text: text!, model: row!.model, use: { node_id: nodeId, prompt_id: prompt!.id, name: prompt!.name, version } };
}

function planTool(tool: Tool): PlanTool {
  if (tool.kind === 'agent') return subagentPlanTool(tool);
  const builtin = builtinTool(tool.builtin);
  const httpSchema = (tool.http?.arguments_schema as PlanTool['parameters'] | undefined) ?? { type: 'object' };
  return {
    id: tool.id,
    name: tool.name,
    kind: tool.kind,
    builtin: tool.builtin,
    description: tool.description ?? builtin?.description ?? tool.name,
    parameters: builtin ? builtin.parameters : tool.kind === 'http' ? httpSchema : tool.kind === 'browser' ? browserToolArgumentsSchema : { type: 'object' },
  };
}

/**
 * The characters of a thread's earlier turns a run takes as context: half of what a node's conversation may
 * hold (workflows/conversation-budget.ts), so that a long thread leaves its oldest turns out, whole, as a
 * chat platform does (OpenAI's `truncation_strategy: auto`), instead of failing every run with
 * `context_length_exceeded`, and the rest is left for the run's own turns.
 */
export const THREAD_HISTORY_CHARS = MAX_CONVERSATION_CHARS / 2;

/** The thread's earlier turns as conversation: each completed run's input and output, the latest that fit THREAD_HISTORY_CHARS. */
export async function threadHistory(tx: TenantTx, tenantId: string, threadId: string, beforeRunId: string): Promise<ChatMessage[]> {
  const runs = await listRecentCompletedRunsWithin(tx, tenantId, threadId, beforeRunId, THREAD_HISTORY_CHARS);
  return runs.flatMap((run): ChatMessage[] => [
    { role: 'user', content: run.input },
    { role: 'assistant', content: run.output ?? '' },
  ]);
}

function asEdges(edges: unknown): Array<{ from: string; to: string }> {
  if (edges === undefined) return [];
  if (!Array.isArray(edges) || !edges.every((e) => typeof e?.from === 'string' && typeof e?.to === 'string')) {
    invalid('"edges" must be a list of {"from": nodeId, "to": nodeId}');
  }
  return edges as Array<{ from: string; to: string }>;
}

function invalid(message: string): never {
  throw agentRunFailure('InvalidGraph', `invalid graph: ${message}`);
}

/**
 * The guardrails a run enforces: every enabled guardrail of the tenant, or, when the graph has a
 * `guardrails` list of names, the enabled ones among those (an unknown name is an invalid graph).
 */
export async function resolveGuardrails(tx: TenantTx, tenantId: string, graph: AgentGraph): Promise<Guardrail[]> {
  const rows = await listAllGuardrails(tx, tenantId);
  let chosen = rows;
  if (graph.guardrails !== undefined) {
    const names = graph.guardrails;
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) invalid('"guardrails" must be a list of guardrail names');
    for (const name of names as string[]) {
      if (!rows.some((row) => row.name === name)) invalid(`the graph names guardrail '${name}', which does not exist`);
    }
    chosen = rows.filter((row) => (names as string[]).includes(row.name));
  }
  return chosen
    .filter((row) => row.enabled)
    .map((row) => ({ name: row.name, kind: row.kind as Guardrail['kind'], target: row.target, action: row.action, config: row.config }));
}
