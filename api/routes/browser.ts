import { sealStorageState } from '../../activities/browser/sign-ins.js';
import { parseOrigin, storageStateProblems, storageStateSchema, summarizeStorageState, type StorageState } from '../../activities/browser/storage-state.js';
import {
  deleteBrowserSignInById,
  findBrowserSignIn,
  findBrowserSignInByName,
  insertBrowserSignInIfNew,
  listBrowserSignInsPage,
  newBrowserSignInId,
  updateBrowserSignInById,
  type StoredBrowserSignIn,
} from '../../db/browser-sign-ins.js';
import type { BrowserSignInRow } from '../../db/schema.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { invalidRequest, orNotFound, type FieldError } from '../errors.js';
import { defineListOperation } from '../list-operation.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { sealingOr503 } from '../unavailable-secrets.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, nullableTimestamp, refParams, timestamp, upsertResultOf } from '../schemas.js';
import { isoTimestampOrNull } from '../iso-timestamp.js';

const TAG = 'Browser';
const signInOr404 = refOr404(findBrowserSignIn, 'sign-in');

const origin: JsonSchema = {
  type: 'string',
  maxLength: 2048,
  pattern: '^https?://[^/?#\\s@]+/?$',
  description: 'The site the sign-in is for, `scheme://host[:port]`. Browser tools load the sign-in only for pages of this origin.',
};
const signInName = nameSchema({ description: 'Unique in the workspace; browser tools name the sign-in by it (or by id).' });

const signInSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  origin: { type: 'string' },
  cookie_count: { type: 'integer' },
  cookie_domains: { type: 'array', items: { type: 'string' }, description: 'The cookies\' domains, as stored.' },
  local_storage_count: { type: 'integer', description: 'Local storage items of the origin.' },
  cookies_expire_at: { ...nullableTimestamp, description: 'The earliest expiry among the cookies that have one; null when every cookie is a session cookie.' },
  created_at: timestamp,
  updated_at: timestamp,
});

interface SignInBody {
  name: string;
  origin: string;
  storage_state: StorageState;
}

function signInJson(row: BrowserSignInRow) {
  return {
    ...pick(row, ['id', 'name', 'origin', 'cookie_count', 'cookie_domains', 'local_storage_count']),
    cookies_expire_at: isoTimestampOrNull(row.cookies_expire_at),
    ...timestampsJson(row),
  };
}

export const listBrowserSignIns = defineListOperation({
  operationId: 'listBrowserSignIns',
  path: '/v1/browser/sign-ins',
  tag: TAG,
  summary: 'The workspace\'s saved sign-ins for the browser tool, oldest first (their storage state is never shown)',
  plural: 'sign_ins',
  pageDescription: 'A page of saved sign-ins',
  itemSchema: signInSchema,
  page: listBrowserSignInsPage,
  toJson: signInJson,
});

export const createBrowserSignIn = defineOperation<Record<string, never>, unknown, SignInBody>({
  operationId: 'createBrowserSignIn',
  method: 'post',
  path: '/v1/browser/sign-ins',
  tag: TAG,
  summary: 'Save a sign-in (cookies and local storage) for the browser tool, or return the existing one with this name unchanged',
  description:
    '`storage_state` is what Playwright\'s `context.storageState()` writes after signing in. It is encrypted at rest and never returned: ' +
    'responses show its cookie count, cookie domains and local storage count. Cookies for another site than the origin (a domain that is ' +
    'neither its host nor a parent domain of it) and local storage of another origin are refused (400 naming each). Storing it needs ' +
    'SECRETS_KEY on the server (503 `unavailable` without it). A name that exists answers 200 with that sign-in as it is; change one with ' +
    'PATCH. See docs/browser.md.',
  access: 'management',
  body: closedObject({ name: signInName, origin, storage_state: storageStateSchema }),
  responses: {
    201: { description: 'Created', schema: upsertResultOf('sign_in', signInSchema) },
    200: { description: 'A sign-in with this name existed; it is returned unchanged', schema: upsertResultOf('sign_in', signInSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    const signInOrigin = checkedOrigin(body.origin);
    checkStorageState(body.storage_state, signInOrigin);
    // An existing name answers as it is before anything is sealed (so also without SECRETS_KEY).
    const existing = await tenant((tx) => findBrowserSignInByName(tx, caller.tenantId, body.name));
    if (existing) return { status: 200, body: { sign_in: signInJson(existing), created: false } };
    const id = newBrowserSignInId();
    const values = await storedSignIn(caller.tenantId, id, signInOrigin, body.storage_state);
    const { row, created } = await tenant(async (tx) => {
      const inserted = await insertBrowserSignInIfNew(tx, caller.tenantId, id, body.name, values);
      const row = inserted ?? orNotFound(await findBrowserSignInByName(tx, caller.tenantId, body.name), 'sign-in', body.name);
      return { row, created: Boolean(inserted) };
    });
    return { status: created ? 201 : 200, body: { sign_in: signInJson(row), created } };
  },
});

export const getBrowserSignIn = defineOperation<{ id: string }>({
  operationId: 'getBrowserSignIn',
  method: 'get',
  path: '/v1/browser/sign-ins/{id}',
  tag: TAG,
  summary: 'A saved sign-in, by id or name (its storage state is never shown)',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The sign-in', schema: closedObject({ sign_in: signInSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const row = await tenantReads((reader) => signInOr404(reader, caller.tenantId, params.id));
    return { status: 200, body: { sign_in: signInJson(row) } };
  },
});

type SignInChanges = Partial<SignInBody>;

export const updateBrowserSignIn = defineOperation<{ id: string }, unknown, SignInChanges>({
  operationId: 'updateBrowserSignIn',
  method: 'patch',
  path: '/v1/browser/sign-ins/{id}',
  tag: TAG,
  summary: 'Rename a saved sign-in or replace its storage state',
  description:
    'Fields left out stay as they are; `storage_state` replaces the stored one whole (sign in again and save the new state when the ' +
    'cookies expire). A new `origin` must come with a new `storage_state` (400 naming `body.storage_state` otherwise): the stored cookies ' +
    'belong to the old one. `{id}` is the sign-in\'s id or name. Browser tools keep the sign-in\'s id, so they follow a rename.',
  access: 'management',
  params: refParams,
  body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { name: signInName, origin, storage_state: storageStateSchema } },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The sign-in as changed', schema: closedObject({ sign_in: signInSchema }) } },
  handler: async ({ params, body, caller, tenant }) => {
    const newOrigin = body.origin === undefined ? undefined : checkedOrigin(body.origin);
    const row = await conflictIfNameTaken(`a sign-in named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const current = await signInOr404(tx, caller.tenantId, params.id);
        const signInOrigin = newOrigin ?? current.origin;
        if (signInOrigin !== current.origin && body.storage_state === undefined) {
          const fields = [{ field: 'body.storage_state', message: 'is required when the origin changes (the stored cookies belong to the old origin)' }];
          throw invalidRequest(`invalid sign-in: ${fields[0]!.field} ${fields[0]!.message}`, fields);
        }
        let values: StoredBrowserSignIn = { ...pick(current, ['origin', 'storage_state', 'cookie_count', 'cookie_domains', 'local_storage_count', 'cookies_expire_at']) };
        if (body.storage_state !== undefined) {
          checkStorageState(body.storage_state, signInOrigin);
          values = await storedSignIn(caller.tenantId, current.id, signInOrigin, body.storage_state);
        }
        return updateBrowserSignInById(tx, caller.tenantId, current.id, body.name ?? current.name, values);
      }),
    );
    return { status: 200, body: { sign_in: signInJson(row) } };
  },
});

export const deleteBrowserSignIn = defineDeleteOperation<{ id: string }>({
  operationId: 'deleteBrowserSignIn',
  path: '/v1/browser/sign-ins/{id}',
  tag: TAG,
  summary: 'Delete a saved sign-in, by id or name (browser tools that name it fail their calls until given another)',
  access: 'management',
  params: refParams,
  find: (tx, tenantId, { id }) => signInOr404(tx, tenantId, id),
  deleteById: deleteBrowserSignInById,
});

/** The schema's pattern lets through strings that are still no origin (`http://a:b`, a trailing path). */
function checkedOrigin(value: string): string {
  const parsed = parseOrigin(value);
  if (!parsed) throw invalidRequest('invalid sign-in: body.origin is not an origin (scheme://host[:port])', [{ field: 'body.origin', message: 'is not an origin (scheme://host[:port])' }]);
  return parsed;
}

function checkStorageState(state: StorageState, signInOrigin: string): void {
  const fields: FieldError[] = storageStateProblems(state, signInOrigin);
  if (fields.length) throw invalidRequest(`invalid sign-in: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
}

async function storedSignIn(tenantId: string, id: string, signInOrigin: string, state: StorageState): Promise<StoredBrowserSignIn> {
  const sealed = await sealingOr503('a sign-in', () => sealStorageState(tenantId, id, state));
  return { origin: signInOrigin, storage_state: sealed, ...summarizeStorageState(state) };
}

export default [listBrowserSignIns, createBrowserSignIn, getBrowserSignIn, updateBrowserSignIn, deleteBrowserSignIn];
