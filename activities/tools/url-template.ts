import { ToolArgumentsError, ToolConfigError } from './errors.js';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The argument names a URL template such as `https://api.example.com/users/{id}` needs. */
export function placeholderNames(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (match) => match[1]!))];
}

/**
 * Replaces every `{name}` with the URL-encoded argument `name`. Encoding keeps an argument inside its
 * path segment: `../admin` or `a/b?x=1` cannot reach another path, query or host.
 */
export function fillUrlTemplate(template: string, args: Record<string, unknown>): URL {
  const filled = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = args[name];
    if (value === undefined || value === null) throw new ToolArgumentsError(`missing argument '${name}', needed for the URL`, [`arguments.${name} is required`]);
    if (typeof value === 'object') {
      throw new ToolArgumentsError(`argument '${name}' must be a string, number or boolean to go into the URL`, [`arguments.${name} must be a scalar`]);
    }
    return encodeURIComponent(String(value));
  });
  let url: URL;
  try {
    url = new URL(filled);
  } catch {
    throw new ToolConfigError(`the URL template does not make a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolConfigError(`the tool URL must be http or https, not ${url.protocol}`);
  return url;
}
