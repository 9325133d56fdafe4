import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createTenant } from '../../db/tenants.js';
import { testPlatform } from './global.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/**
 * Calls the running API over real HTTP and checks every answer against the OpenAPI document the API
 * serves: an undocumented status or a body that breaks its documented schema fails the test, so the
 * document cannot drift from the code.
 */
export async function call<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload: string | Buffer | undefined = options.rawBody;
  if (payload === undefined && options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined) headers['content-type'] ??= 'application/json';

  const response = await fetch(testPlatform().apiUrl + path, { method, headers, body: payload });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.includes('application/json');
  const body = isJson && text ? JSON.parse(text) : text;
  await checkAgainstDocument(method, path, response.status, body, isJson ?? false);
  return { status: response.status, headers: response.headers, body };
}

/** A workspace of the tests, with its management key (`key`) and a standard key. */
export interface TestTenant {
  tenantId: string;
  key: string;
  standardKey: string;
}

/** A new workspace with its management key and a standard key, made the way the CLI makes them. */
export async function newTenant(name = 'test'): Promise<TestTenant> {
  const { tenant, apiKey } = await createTenant(testPlatform().db, `${name}-${Math.random().toString(36).slice(2, 8)}`);
  const standard = await call('POST', '/v1/api-keys', { key: apiKey, body: { kind: 'standard', name: 'tests' } });
  return { tenantId: tenant.id, key: apiKey, standardKey: standard.body.key };
}

// ---- the response check ----

type Document = { paths: Record<string, Record<string, { responses: Record<string, any> }>>; components: any };

let documentPromise: Promise<Document> | undefined;
const validators = new Map<string, ValidateFunction>();
const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));

async function checkAgainstDocument(method: string, path: string, status: number, body: unknown, isJson: boolean) {
  documentPromise ??= fetch(testPlatform().apiUrl + '/openapi.json').then((r) => r.json() as Promise<Document>);
  const document = await documentPromise;
  const template = matchTemplate(Object.keys(document.paths), path.split('?')[0]!);
  if (!template) {
    // An unknown route answers the plain 404 error body; a non-API path (OAuth) a method it lacks, a 405.
    if (status === 404 || status === 405) return;
    throw new Error(`${method} ${path} is not in the OpenAPI document`);
  }
  const operation = document.paths[template]![method.toLowerCase()];
  if (!operation) return; // a method the path does not have: the router's 404/405
  const response = operation.responses[String(status)];
  if (!response) throw new Error(`${method} ${template} answered ${status}, which the OpenAPI document does not list`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema || !isJson) return;

  const cacheKey = `${method} ${template} ${status}`;
  let validate = validators.get(cacheKey);
  if (!validate) {
    validate = ajv.compile(inlineRefs(schema, document) as object);
    validators.set(cacheKey, validate);
  }
  if (!validate(body)) {
    throw new Error(`${cacheKey}: body breaks the documented schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
  }
}

function matchTemplate(templates: string[], path: string): string | undefined {
  const parameterCount = (template: string) => template.split('{').length - 1;
  return templates
    .filter((template) => new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$').test(path))
    // A literal segment beats a parameter: /v1/agents/search before /v1/agents/{id}.
    .sort((a, b) => parameterCount(a) - parameterCount(b))[0];
}

function inlineRefs(schema: unknown, document: Document): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlineRefs(item, document));
  if (schema && typeof schema === 'object') {
    const ref = (schema as { $ref?: string }).$ref;
    if (ref?.startsWith('#/')) {
      const target = ref.slice(2).split('/').reduce<any>((node, key) => node?.[key], document);
      return inlineRefs(target, document);
    }
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inlineRefs(v, document)]));
  }
  return schema;
}
