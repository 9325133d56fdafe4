import { agentRunFailure } from '../../workflows/agent-run-api.js';
import { findSkillByName, findSkillVersion } from '../../db/skills.js';
import type { SkillVersion, Tool } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { findToolsByRef } from '../../db/tools.js';
import { builtinTool } from '../tools/builtins/registry.js';
import type { PlanNode, PlanSkill, PlanTool } from './types.js';
import { isVersionNumber } from './version-number.js';

/** How many skills one node may list: each version's instructions travel in the run's plan. */
const MAX_NODE_SKILLS = 50;

/**
 * The skill instructions one run's plan may carry, in UTF-8 bytes across all its nodes. The plan is
 * `beginRun`'s result and a loaded skill's instructions stay in every later `callModel` input: both
 * are Temporal payloads, limited to 2 MB each by default.
 */
export const MAX_PLAN_SKILL_BYTES = 256 * 1024;

/** The most tools a node may end up offering, its own and all its skills' (OpenAI's limit per request). */
export const MAX_NODE_TOOLS = 128;

/** The built-ins a node with skills is offered, whether or not its `toolRefs` name them. */
const SKILL_BUILTINS = ['list_skills', 'use_skill'] as const;

/**
 * A node's `skills` (docs/skills.md): each a skill name (its current version when the run starts) or
 * `{"name", "version"}` (pinned). Answers the skill versions, each with its tools, and the node's tools
 * with `list_skills` and `use_skill` added. A skill, version or tool that does not exist is an invalid
 * graph, as is another tool taking the name of either built-in.
 */
export async function resolveNodeSkills(
  tx: TenantTx,
  tenantId: string,
  nodeId: string,
  spec: unknown,
  nodeTools: PlanTool[],
  planTool: (tool: Tool) => PlanTool,
): Promise<{ skills: PlanSkill[]; tools: PlanTool[] }> {
  const invalid = (message: string): never => {
    throw agentRunFailure('InvalidGraph', `invalid graph: node '${nodeId}': ${message}`);
  };
  if (!Array.isArray(spec)) invalid('"skills" must be a list of skill names or {"name", "version"}');
  const refs = spec as unknown[];
  if (refs.length === 0) return { skills: [], tools: nodeTools };
  if (refs.length > MAX_NODE_SKILLS) invalid(`"skills" lists ${refs.length} skills; at most ${MAX_NODE_SKILLS} are allowed`);

  const versions: Array<SkillVersion & { name: string }> = [];
  for (const ref of refs) {
    const { name, version } = skillRef(ref) ?? invalid('each of "skills" must be a skill name or {"name": string, "version": integer}');
    if (versions.some((v) => v.name === name)) invalid(`"skills" lists skill '${name}' twice`);
    const skill = (await findSkillByName(tx, tenantId, name)) ?? invalid(`uses skill '${name}', which does not exist`);
    const row = (await findSkillVersion(tx, tenantId, skill.id, version ?? skill.version)) ?? invalid(`pins version ${version} of skill '${name}', which has no such version`);
    versions.push({ ...row, name: skill.name });
  }

  const catalog = await findToolsByRef(tx, tenantId, [...new Set(versions.flatMap((v) => v.tools))]);
  // Tool names are unique in the catalog, so a skill's tool and a node's of one name are the same tool.
  const skills = versions.map((v): PlanSkill => {
    const tools = v.tools.map((id) => {
      const tool = catalog.get(id) ?? invalid(`skill '${v.name}' v${v.version} brings tool '${id}', which is no longer in the catalog`);
      if (isSkillBuiltinName(tool.name) && !(tool.kind === 'builtin' && tool.builtin === tool.name)) {
        invalid(`skill '${v.name}' brings a tool named '${tool.name}', the name of the built-in a node with skills is offered`);
      }
      return planTool(tool);
    });
    return { skillId: v.skill_id, name: v.name, version: v.version, description: v.description, instructions: v.instructions, tools };
  });

  const tools = [...nodeTools];
  for (const key of SKILL_BUILTINS) {
    const own = nodeTools.find((tool) => tool.name === key);
    if (own && !(own.kind === 'builtin' && own.builtin === key)) invalid(`has skills, so its tool named '${key}' must be the built-in ${key}`);
    if (!own) {
      const builtin = builtinTool(key)!;
      tools.push({ id: '', name: key, kind: 'builtin', builtin: key, description: builtin.description, parameters: builtin.parameters });
    }
  }
  return { skills, tools };
}

/**
 * What no run may exceed (docs/skills.md), checked as each node is resolved, so that a graph over the
 * limits stops at the node that crosses them: the tools the node would offer with every one of its
 * skills loaded, and the skill instructions the plan carries in all (`bytesSoFar`, of the nodes before
 * it). Either is an invalid graph naming the node. Answers the plan's skill bytes with this node's.
 */
export function checkNodeLimits(node: PlanNode, bytesSoFar: number): number {
  // As SkillSession adds them: a skill's tool joins unless the node offers one of its name already.
  const own = new Set(node.tools.map((tool) => tool.name));
  const added = new Set((node.skills ?? []).flatMap((skill) => skill.tools.map((tool) => tool.name)).filter((name) => !own.has(name)));
  const offered = node.tools.length + added.size;
  if (offered > MAX_NODE_TOOLS) {
    throw agentRunFailure('InvalidGraph', `invalid graph: node '${node.id}' would offer ${offered} tools with all its skills loaded; at most ${MAX_NODE_TOOLS} are allowed`);
  }
  const bytes = (node.skills ?? []).reduce((sum, skill) => sum + Buffer.byteLength(skill.instructions, 'utf8'), 0);
  const total = bytesSoFar + bytes;
  if (total > MAX_PLAN_SKILL_BYTES) {
    throw agentRunFailure(
      'InvalidGraph',
      `invalid graph: node '${node.id}': its skills' instructions (${bytes} bytes) bring the run's total to ${total} bytes; at most ${MAX_PLAN_SKILL_BYTES} bytes of skill instructions are allowed across the nodes`,
    );
  }
  return total;
}

function isSkillBuiltinName(name: string): boolean {
  return (SKILL_BUILTINS as readonly string[]).includes(name);
}

function skillRef(ref: unknown): { name: string; version?: number } | undefined {
  if (typeof ref === 'string' && ref) return { name: ref };
  if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) return undefined;
  const { name, version, ...rest } = ref as Record<string, unknown>;
  if (typeof name !== 'string' || !name || Object.keys(rest).length > 0) return undefined;
  if (version !== undefined && !isVersionNumber(version)) return undefined;
  return { name, ...(version !== undefined && { version: version as number }) };
}
