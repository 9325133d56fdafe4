import YAML from 'yaml';

/**
 * A `SKILL.md` file in the Agent Skills format: YAML front matter between `---` lines with `name` and
 * `description`, then the Markdown instructions. Other front-matter keys (`license`, `allowed-tools`,
 * `metadata`, …) are accepted and ignored: they describe the file for other hosts, not for this one.
 */
export interface SkillMd {
  name: string;
  description: string;
  instructions: string;
}

/** Why a file is not a usable SKILL.md; the API answers it as a 400. */
export class SkillMdError extends Error {}

const FRONT_MATTER = /^---[ \t]*\n(?:([\s\S]*?)\n)?---[ \t]*(?:\n|$)/;

/** The largest front matter parsed, in UTF-8 bytes: parsing runs on the event loop, and `name` and `description` need little. */
export const MAX_FRONT_MATTER_BYTES = 64 * 1024;

export function parseSkillMd(text: string): SkillMd {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const match = FRONT_MATTER.exec(normalized);
  if (!match) throw new SkillMdError('SKILL.md must start with YAML front matter between two "---" lines');
  const fields = frontMatter(match[1] ?? '');
  const instructions = normalized.slice(match[0].length).trim();
  if (!instructions) throw new SkillMdError('SKILL.md has no instructions: the Markdown after the front matter is empty');
  return { name: requiredString(fields, 'name'), description: requiredString(fields, 'description'), instructions };
}

function frontMatter(source: string): Record<string, unknown> {
  const bytes = Buffer.byteLength(source, 'utf8');
  if (bytes > MAX_FRONT_MATTER_BYTES) {
    throw new SkillMdError(`SKILL.md front matter is ${bytes} bytes; at most ${MAX_FRONT_MATTER_BYTES} are allowed`);
  }
  let value: unknown;
  try {
    // The core schema reads dates as strings; a low alias limit keeps a "billion laughs" file cheap.
    // logLevel 'error' still throws errors, but keeps warnings (an unknown `!tag`, thousands of them if
    // the file says so) from process.emitWarning, that is from the server's stderr.
    value = YAML.parse(source, { schema: 'core', uniqueKeys: true, maxAliasCount: 20, prettyErrors: false, logLevel: 'error' });
  } catch (err) {
    throw new SkillMdError(`SKILL.md front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SkillMdError('SKILL.md front matter must be a mapping with "name" and "description"');
  }
  return value as Record<string, unknown>;
}

function requiredString(fields: Record<string, unknown>, key: string): string {
  const value = fields[key];
  if (value === undefined || value === null) throw new SkillMdError(`SKILL.md front matter has no "${key}"`);
  if (typeof value !== 'string') throw new SkillMdError(`SKILL.md front matter "${key}" must be a string`);
  const trimmed = value.trim();
  if (!trimmed) throw new SkillMdError(`SKILL.md front matter "${key}" is empty`);
  return trimmed;
}
