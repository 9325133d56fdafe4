import type { RunSkillUse } from '../../../db/schema.js';
import type { ChatMessage } from '../../models/types.js';
import type { PlanNode, PlanTool } from '../../runs/types.js';
import type { NodeSkills } from './definition.js';

/**
 * The skills of one node while it runs, kept in workflow state (docs/skills.md). `use_skill` records the
 * version on the run, adds the skill's tools to the node's for the rest of the node, and queues its
 * instructions as a user message that the workflow appends after the turn's tool results, so the next
 * model request carries them. Loading a loaded skill again changes nothing. Deterministic code only.
 */
export class SkillSession implements NodeSkills {
  /** The tools the node offers the model: its own, then those of each skill it loaded. */
  readonly tools: PlanTool[];
  private readonly loaded = new Set<string>();
  private pending: ChatMessage[] = [];

  constructor(
    private readonly node: PlanNode,
    /** Records the skill version on the run (an activity: runs.skills). */
    private readonly record: (use: RunSkillUse) => Promise<void>,
  ) {
    this.tools = [...node.tools];
  }

  list() {
    return (this.node.skills ?? []).map((skill) => ({ name: skill.name, description: skill.description, version: skill.version, loaded: this.loaded.has(skill.name) }));
  }

  async use(name: string): Promise<Record<string, unknown>> {
    const skill = this.node.skills?.find((s) => s.name === name);
    if (!skill) {
      const names = (this.node.skills ?? []).map((s) => `'${s.name}'`);
      throw new Error(`skill '${name}' is not one this node may use (${names.length ? `its skills: ${names.join(', ')}` : 'it has none'})`);
    }
    const result = { skill: skill.name, version: skill.version, tools: skill.tools.map((tool) => tool.name) };
    if (this.loaded.has(name)) return { ...result, already_loaded: true };
    await this.record({ node_id: this.node.id, skill_id: skill.skillId, name: skill.name, version: skill.version });
    this.loaded.add(name);
    for (const tool of skill.tools) {
      if (!this.tools.some((t) => t.name === tool.name)) this.tools.push(tool);
    }
    this.pending.push({
      role: 'user',
      content: `Skill "${skill.name}" (version ${skill.version}) is loaded. Follow its instructions:\n\n${skill.instructions}`,
    });
    return { ...result, loaded: true };
  }

  /** The instructions loaded since the last call, to append once the turn's tool results are in. */
  takeMessages(): ChatMessage[] {
    const messages = this.pending;
    this.pending = [];
    return messages;
  }
}
