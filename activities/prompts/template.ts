/**
 * Prompt templates: `{{name}}` is replaced by the variable `name` (spaces inside the braces are allowed:
 * `{{ name }}`). Names are letters, digits, `_`, `-` and `.`, starting with a letter or `_`. A literal
 * `{{` is written `\{{`. Every variable the template names must be given; a missing one is an error
 * naming it, never an empty string.
 */

const PLACEHOLDER = /\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

/** The variable names a template uses, in order of first use. */
export function templateVariables(template: string): string[] {
  checkSyntax(template);
  const names: string[] = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (match[1] && !names.includes(match[1])) names.push(match[1]);
  }
  return names;
}

export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  const missing = templateVariables(template).filter((name) => variables[name] === undefined || variables[name] === null);
  if (missing.length) throw new TemplateError(`missing template ${missing.length === 1 ? 'variable' : 'variables'}: ${missing.join(', ')}`);
  return template.replace(PLACEHOLDER, (whole, name: string | undefined) => {
    if (!name) return '{{';
    const value = variables[name];
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** A `{{` that opens no valid placeholder is a mistake worth reporting when the template is saved. */
function checkSyntax(template: string): void {
  const stripped = template.replace(PLACEHOLDER, '');
  const index = stripped.indexOf('{{');
  if (index >= 0) {
    throw new TemplateError(`"{{" at "${stripped.slice(index, index + 20)}" opens no valid placeholder: use {{name}}, or \\{{ for a literal "{{"`);
  }
}
