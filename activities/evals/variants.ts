import { ApplicationFailure } from '@temporalio/common';
import { findAgentVersionByNumber, findPublishedVersion } from '../../db/agents.js';
import { listProviderNames } from '../../db/provider-connections.js';
import type { AgentGraph, StoredVariant } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { modelIdProblem } from '../models/model-id-problem.js';
import { resolveGuardrails, resolveNodes } from '../runs/plan.js';
import type { PlanNode } from '../runs/types.js';

/**
 * An experiment's variants, resolved once when it is created: each names what it changes of the agent
 * (a version, a model, a prompt version, a temperature, or a whole graph), and becomes the exact version
 * and graph its runs execute. Resolving runs the same checks a run's plan does (every node's model,
 * prompt version and tools), so a variant that could not run is refused before anything starts.
 */

/** A variant as asked for: the stored variant before it is resolved. */
export type VariantSpec = Omit<StoredVariant, 'resolved'>;

export interface VariantProblem {
  field: string;
  message: string;
}

export type ResolvedVariants = { variants: StoredVariant[] } | { problems: VariantProblem[] };

export async function resolveVariants(tx: TenantTx, tenantId: string, agentId: string, specs: VariantSpec[], path: string): Promise<ResolvedVariants> {
  const problems: VariantProblem[] = [];
  const variants: StoredVariant[] = [];
  const names = new Set<string>();
  const workspaceProviders = await listProviderNames(tx, tenantId);
  for (const [index, spec] of specs.entries()) {
    const field = `${path}[${index}]`;
    if (names.has(spec.name)) problems.push({ field: `${field}.name`, message: `repeats the variant name '${spec.name}'` });
    names.add(spec.name);
    const resolved = await resolveVariant(tx, tenantId, agentId, spec, field, workspaceProviders);
    if ('problems' in resolved) problems.push(...resolved.problems);
    else variants.push({ ...spec, resolved: resolved.resolved });
  }
  return problems.length > 0 ? { problems } : { variants };
}

async function resolveVariant(
  tx: TenantTx,
  tenantId: string,
  agentId: string,
  spec: VariantSpec,
  field: string,
  workspaceProviders: ReadonlySet<string>,
): Promise<{ problems: VariantProblem[] } | { resolved: StoredVariant['resolved'] }> {
  const version =
    spec.agent_version === undefined ? await findPublishedVersion(tx, tenantId, agentId) : await findAgentVersionByNumber(tx, tenantId, agentId, spec.agent_version);
  if (!version) {
    const message = spec.agent_version === undefined ? 'the agent has no published version: name one with agent_version' : `the agent has no version ${spec.agent_version}`;
    return { problems: [{ field: `${field}.agent_version`, message }] };
  }
  if (spec.model !== undefined) {
    const problem = modelProblem(spec.model, workspaceProviders);
    if (problem) return { problems: [{ field: `${field}.model`, message: problem }] };
  }

  const graph = applyOverrides(structuredClone(spec.graph ?? version.graph), spec);
  const seen = new Set<string>();
  for (const node of graph.nodes) {
    if (seen.has(node.id)) return { problems: [{ field: `${field}.graph`, message: `duplicate node id '${node.id}'` }] };
    seen.add(node.id);
  }
  let nodes: PlanNode[];
  try {
    nodes = await resolveNodes(tx, tenantId, graph);
    await resolveGuardrails(tx, tenantId, graph);
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    return { problems: [{ field, message: err.message }] };
  }
  for (const node of nodes) {
    const problem = modelProblem(node.model, workspaceProviders);
    if (problem) return { problems: [{ field, message: `node '${node.id}': ${problem}` }] };
  }
  return { resolved: { agent_version_id: version.id, version: version.version, graph: pinPromptVersions(graph, nodes) } };
}

/** Every node's prompt at the version resolved now, so a prompt edited mid-experiment changes no later cell. */
function pinPromptVersions(graph: AgentGraph, nodes: PlanNode[]): AgentGraph {
  for (const node of graph.nodes) {
    const use = nodes.find((resolved) => resolved.id === node.id)?.prompt;
    if (!use) continue;
    const spec = typeof node.prompt === 'object' && node.prompt !== null ? (node.prompt as Record<string, unknown>) : {};
    node.prompt = { ...spec, name: use.name, version: use.version };
  }
  return graph;
}

function modelProblem(model: string, workspaceProviders: ReadonlySet<string>): string | undefined {
  const problem = modelIdProblem(model, workspaceProviders);
  return problem && `'${model}' is a model id ${problem}`;
}

/** The variant's model, prompt and temperature, set on every node of the graph. */
function applyOverrides(graph: AgentGraph, spec: VariantSpec): AgentGraph {
  for (const node of graph.nodes) {
    if (spec.model !== undefined) node.model = spec.model;
    if (spec.temperature !== undefined) node.temperature = spec.temperature;
    if (spec.prompt !== undefined) {
      // A node's own prompt variables still fill the new prompt's template; a prompt replaces `system`.
      const variables = typeof node.prompt === 'object' && node.prompt !== null ? (node.prompt as { variables?: unknown }).variables : undefined;
      node.prompt = { name: spec.prompt.name, ...(spec.prompt.version !== undefined && { version: spec.prompt.version }), ...(variables !== undefined && { variables }) };
      delete node.system;
    }
  }
  return graph;
}
