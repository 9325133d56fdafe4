import { parseModelId } from './model-id.js';
import { MODEL_PROVIDERS } from './provider.js';

/**
 * What is wrong with a model id a tenant saved (`provider/model`), as the end of a sentence about it
 * ("is 'x', whose provider is …"), or undefined when it names a model of a known provider: the server's
 * own, or one of `workspaceProviders` (the names of the workspace's provider connections). Checked when
 * the id is saved, so a bad one is a 400 then rather than a failure in some later background job.
 */
export function modelIdProblem(model: string, workspaceProviders: ReadonlySet<string> = new Set()): string | undefined {
  const id = parseModelId(model);
  if (!(MODEL_PROVIDERS as readonly string[]).includes(id.provider) && !workspaceProviders.has(id.provider)) {
    return `whose provider is not one of ${MODEL_PROVIDERS.join(', ')} or the workspace's provider connections`;
  }
  if (id.provider !== 'scripted' && !id.model) return `which names no model: use '${id.provider}/<model>'`;
  return undefined;
}

/**
 * The same rule as a JSON Schema pattern, for request schemas to state. `[\s\S]`, not `.`: a dot stops
 * at \r in ECMA-262 (what the API validates with) but not in Python (what clients such as schemathesis
 * generate with), and the rule above takes any characters after the slash.
 */
export const MODEL_ID_PATTERN = `^(?:(?:${MODEL_PROVIDERS.filter((p) => p !== 'scripted').join('|')})/[\\s\\S]+|scripted(?:/[\\s\\S]*)?)$`;
