import type Koa from 'koa';
import {
  addSkillVersionIfChanged,
  deleteSkillById,
  findSkill,
  findSkillVersion,
  insertSkillIfNew,
  listSkillsPage,
  listVersionsOfSkill,
  lockSkill,
  lockSkillByName,
  renameSkill,
  type SkillContent,
  type SkillWithCurrent,
} from '../../db/skills.js';
import type { Skill, SkillVersion } from '../../db/schema.js';
import type { TenantTx } from '../../db/tenant-transaction.js';
import { findToolsByRef } from '../../db/tools.js';
import { ApiError, invalidRequest, notFound, orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { defineListOperation } from '../list-operation.js';
import { JSON_BODY_LIMIT, readJsonBody } from '../middleware/json-body.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { readBodyUpTo } from '../read-body.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, MAX_REQUEST_INTEGER, pathParams, timestamp, upsertResultOf } from '../schemas.js';
import { parseSkillMd, SkillMdError } from '../skill-md.js';
import { readUpload, UPLOAD_LIMIT_BYTES } from '../upload.js';
import { requestValidator } from '../validation.js';
import { isoTimestamp } from '../iso-timestamp.js';

const TAG = 'Skills';

/** `import` is taken by POST /v1/skills/import, which a concrete path wins over /v1/skills/{ref}. */
const skillName = nameSchema({ not: { const: 'import' } });
const description: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  description: 'What the skill is for and when to use it: what `list_skills` shows the model (at most 1024 characters, as in Agent Skills).',
};
const instructions: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100_000,
  description: 'Markdown that `use_skill` adds to the conversation (at most 100,000 characters).',
};
const MAX_SKILL_TOOLS = 20;
const tools: JsonSchema = {
  type: 'array',
  maxItems: MAX_SKILL_TOOLS,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 200 },
  description: 'Tools of the catalog (ids or names; stored as ids) that `use_skill` adds to the node. Each must exist (400 otherwise).',
};
const refParams = pathParams(['ref']);

const skillSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  version: { type: 'integer', description: 'The current version; bumped by edits of description, instructions or tools.' },
  description: { type: 'string' },
  instructions: { type: 'string' },
  tools: { type: 'array', items: { type: 'string' }, description: 'Catalog tool ids.' },
  created_at: timestamp,
  updated_at: timestamp,
});
const skillBody = closedObject({ skill: skillSchema });
const upsertResult = upsertResultOf('skill', skillSchema);

const versionSchema = closedObject({
  skill_id: { type: 'string' },
  version: { type: 'integer' },
  version_id: { type: 'string' },
  description: { type: 'string' },
  instructions: { type: 'string' },
  tools: { type: 'array', items: { type: 'string' } },
  created_at: timestamp,
});

function skillJson(skill: Skill, current: SkillVersion) {
  return { ...pick(skill, ['id', 'name', 'version']), ...pick(current, ['description', 'instructions', 'tools']), ...timestampsJson(skill) };
}

function versionJson(version: SkillVersion) {
  return {
    skill_id: version.skill_id,
    version: version.version,
    version_id: version.id,
    ...pick(version, ['description', 'instructions', 'tools']),
    created_at: isoTimestamp(version.created_at),
  };
}

const skillOr404 = refOr404(findSkill, 'skill');
const lockedSkillOr404 = refOr404(lockSkill, 'skill');

/** The catalog ids of `refs` (ids or names), in order and once each; a ref that names no tool is a 400. */
async function toolIds(tx: TenantTx, tenantId: string, refs: string[] | undefined): Promise<string[]> {
  if (!refs?.length) return [];
  const found = await findToolsByRef(tx, tenantId, refs);
  const missing = refs.flatMap((ref, i) => (found.has(ref) ? [] : [{ ref, field: `body.tools.${i}`, message: 'names no tool of the catalog' }]));
  if (missing.length) {
    throw invalidRequest(`unknown tools: ${missing.map((m) => `'${m.ref}'`).join(', ')}`, missing.map(({ field, message }) => ({ field, message })));
  }
  return [...new Set(refs.map((ref) => found.get(ref)!.id))];
}

/**
 * Creates the skill named `name` as version 1 (created), or makes `content` the next version of the one
 * with this name when it differs from its current version (an identical one changes nothing), as POST
 * /v1/prompts does. `content` may depend on that current version (an import keeps its tools).
 */
async function saveSkill(
  tx: TenantTx,
  tenantId: string,
  name: string,
  content: (current: SkillVersion | undefined) => SkillContent,
): Promise<SkillWithCurrent & { created: boolean }> {
  const inserted = await insertSkillIfNew(tx, tenantId, name, content(undefined));
  if (inserted) return { ...inserted, created: true };
  const found = orNotFound(await lockSkillByName(tx, tenantId, name), 'skill', name);
  return { ...(await addSkillVersionIfChanged(tx, found, content(found.current))), created: false };
}

export const listSkills = defineListOperation({
  operationId: 'listSkills',
  path: '/v1/skills',
  tag: TAG,
  summary: 'Skills with their current version, oldest first',
  plural: 'skills',
  pageDescription: 'A page of skills',
  itemSchema: skillSchema,
  page: listSkillsPage,
  toJson: ({ skill, current }) => skillJson(skill, current),
});

type UpsertBody = { name: string; description: string; instructions: string; tools?: string[] };

export const upsertSkill = defineOperation<Record<string, never>, unknown, UpsertBody>({
  operationId: 'upsertSkill',
  method: 'post',
  path: '/v1/skills',
  tag: TAG,
  summary: 'Create a skill, or update the one with this name',
  description:
    'The body is the whole definition: omitted `tools` are none. When the name exists and the description, instructions or tools ' +
    'differ from the current version, they become a new version (200); identical content changes nothing (200, same version).',
  access: 'key',
  body: closedObject({ name: skillName, description, instructions, tools }, { required: ['name', 'description', 'instructions'] }),
  errors: ['invalid_request'],
  responses: {
    201: { description: 'Created, as version 1', schema: upsertResult },
    200: { description: 'A skill with this name existed; it is updated when the content differs', schema: upsertResult },
  },
  handler: async ({ body, caller, tenant }) => {
    const { skill, current, created } = await tenant(async (tx) => {
      const ids = await toolIds(tx, caller.tenantId, body.tools);
      return saveSkill(tx, caller.tenantId, body.name, () => ({ description: body.description, instructions: body.instructions, tools: ids }));
    });
    return { status: created ? 201 : 200, body: { skill: skillJson(skill, current), created } };
  },
});

/**
 * The longest JSON `content`, in characters (code points, as JSON Schema counts): any string of this
 * length fits in a JSON body (JSON_BODY_LIMIT) even with every character escaped, at worst 12 bytes for
 * one outside the BMP (`\uD83D\uDE00`). Longer files go as multipart or text/markdown (4 MB).
 */
const MAX_IMPORT_JSON_CONTENT = Math.floor((JSON_BODY_LIMIT - 64) / 12);

const importJsonBody = closedObject(
  {
    content: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_IMPORT_JSON_CONTENT,
      description: 'The text of a SKILL.md file (JSON bodies are limited to 1 MB; send larger files as multipart or text/markdown).',
    },
  },
  { required: ['content'] },
);
const validateImportJson = requestValidator('body', importJsonBody);
/** What the front matter and body must satisfy: the same rules as upsertSkill's fields. */
const validateImported = requestValidator('body', closedObject({ name: skillName, description, instructions }));

export const importSkill = defineOperation({
  operationId: 'importSkill',
  method: 'post',
  path: '/v1/skills/import',
  tag: TAG,
  summary: 'Create or update a skill from a SKILL.md file (Agent Skills format)',
  description:
    'The file: YAML front matter between `---` lines with `name` and `description` (other keys, such as `license`, `allowed-tools` ' +
    'or `metadata`, are accepted and ignored), then the Markdown instructions. Send it as a multipart `file`, as a ' +
    '`text/markdown` body, or as JSON `{"content": "..."}`. Saved as upsertSkill saves: a new name is version 1 (201); an existing ' +
    "one gets a new version when the description or instructions differ (200). An import keeps the skill's `tools` (none for a new skill).",
  access: 'key',
  requestBody: {
    required: true,
    content: {
      'application/json': { schema: importJsonBody },
      'multipart/form-data': {
        schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', contentMediaType: 'text/markdown', maxLength: UPLOAD_LIMIT_BYTES } } },
      },
      'text/markdown': { schema: { type: 'string', maxLength: UPLOAD_LIMIT_BYTES } },
    },
  },
  errors: ['invalid_request', 'payload_too_large', 'unsupported_media_type'],
  responses: {
    201: { description: 'Created, as version 1', schema: upsertResult },
    200: { description: 'A skill with this name existed; it is updated when the content differs', schema: upsertResult },
  },
  handler: async ({ caller, tenant, koa }) => {
    const parsed = await readSkillMd(koa);
    const { skill, current, created } = await tenant((tx) =>
      saveSkill(tx, caller.tenantId, parsed.name, (existing) => ({ description: parsed.description, instructions: parsed.instructions, tools: existing?.tools ?? [] })),
    );
    return { status: created ? 201 : 200, body: { skill: skillJson(skill, current), created } };
  },
});

/** The uploaded SKILL.md, parsed and checked as upsertSkill checks its body. */
async function readSkillMd(koa: Koa.Context) {
  let text: string;
  if (koa.is('multipart/form-data')) {
    text = decodeUtf8((await readUpload(koa, 'file')).bytes);
  } else if (koa.is('text/markdown', 'text/plain')) {
    text = decodeUtf8(await readBodyUpTo(koa, UPLOAD_LIMIT_BYTES, () => new ApiError('payload_too_large', `SKILL.md files are limited to ${UPLOAD_LIMIT_BYTES} bytes (4 MB)`)));
  } else {
    const body = await readJsonBody(koa);
    validateImportJson(body);
    text = (body as { content: string }).content;
  }
  let parsed;
  try {
    parsed = parseSkillMd(text);
  } catch (err) {
    if (err instanceof SkillMdError) throw invalidRequest(err.message, [{ field: 'body.file', message: err.message }]);
    throw err;
  }
  try {
    validateImported(parsed);
  } catch (err) {
    if (err instanceof ApiError) throw new ApiError(err.code, `SKILL.md: ${err.message}`, err.details);
    throw err;
  }
  return parsed;
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidRequest('SKILL.md must be UTF-8 text', [{ field: 'body.file', message: 'is not UTF-8 text' }]);
  }
}

export const getSkill = defineOperation<{ ref: string }>({
  operationId: 'getSkill',
  method: 'get',
  path: '/v1/skills/{ref}',
  tag: TAG,
  summary: 'A skill (by id or name) with its current version',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The skill', schema: skillBody } },
  handler: async ({ params, caller, tenantReads }) => {
    const { skill, current } = await tenantReads((reader) => skillOr404(reader, caller.tenantId, params.ref));
    return { status: 200, body: { skill: skillJson(skill, current) } };
  },
});

export const listSkillVersions = defineOperation<{ ref: string }>({
  operationId: 'listSkillVersions',
  method: 'get',
  path: '/v1/skills/{ref}/versions',
  tag: TAG,
  summary: 'Every version of a skill, newest first',
  access: 'key',
  params: refParams,
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The versions',
      schema: closedObject({ skill_id: { type: 'string' }, name: { type: 'string' }, versions: { type: 'array', items: versionSchema } }),
    },
  },
  handler: async ({ params, caller, tenantReads }) => {
    const { skill, versions } = await tenantReads(async (reader) => {
      const { skill } = await skillOr404(reader, caller.tenantId, params.ref);
      return { skill, versions: await listVersionsOfSkill(reader, caller.tenantId, skill.id) };
    });
    return { status: 200, body: { skill_id: skill.id, name: skill.name, versions: versions.map(versionJson) } };
  },
});

export const getSkillVersion = defineOperation<{ ref: string; version: number }>({
  operationId: 'getSkillVersion',
  method: 'get',
  path: '/v1/skills/{ref}/versions/{version}',
  tag: TAG,
  summary: 'One version of a skill',
  access: 'key',
  params: { type: 'object', required: ['ref', 'version'], properties: { ref: { type: 'string', minLength: 1 }, version: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER } } },
  errors: ['not_found'],
  responses: { 200: { description: 'The version', schema: closedObject({ version: versionSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const version = await tenantReads(async (reader) => {
      const { skill } = await skillOr404(reader, caller.tenantId, params.ref);
      return findSkillVersion(reader, caller.tenantId, skill.id, params.version);
    });
    if (!version) throw notFound('skill version', `${params.ref}@${params.version}`);
    return { status: 200, body: { version: versionJson(version) } };
  },
});

export const updateSkill = defineOperation<{ ref: string }, unknown, { name?: string; description?: string; instructions?: string; tools?: string[] }>({
  operationId: 'updateSkill',
  method: 'patch',
  path: '/v1/skills/{ref}',
  tag: TAG,
  summary: 'Rename or edit a skill (management keys only)',
  description: 'Editing description, instructions or tools makes a new version (an edit to what the version already holds changes nothing); a rename alone does not.',
  access: 'management',
  params: refParams,
  body: { type: 'object', minProperties: 1, additionalProperties: false, properties: { name: skillName, description, instructions, tools } },
  errors: ['not_found', 'conflict', 'invalid_request'],
  responses: { 200: { description: 'The skill', schema: skillBody } },
  handler: async ({ params, body, caller, tenant }) => {
    const { skill, current } = await conflictIfNameTaken(`a skill named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const found = await lockedSkillOr404(tx, caller.tenantId, params.ref);
        const ids = body.tools === undefined ? found.current.tools : await toolIds(tx, caller.tenantId, body.tools);
        let { skill } = found;
        if (body.name !== undefined && body.name !== skill.name) skill = await renameSkill(tx, skill, body.name);
        return addSkillVersionIfChanged(tx, { skill, current: found.current }, {
          description: body.description ?? found.current.description,
          instructions: body.instructions ?? found.current.instructions,
          tools: ids,
        });
      }),
    );
    return { status: 200, body: { skill: skillJson(skill, current) } };
  },
});

export const deleteSkill = defineDeleteOperation<{ ref: string }>({
  operationId: 'deleteSkill',
  path: '/v1/skills/{ref}',
  tag: TAG,
  summary: 'Delete a skill and all its versions',
  params: refParams,
  find: async (tx, tenantId, { ref }) => (await lockedSkillOr404(tx, tenantId, ref)).skill,
  deleteById: deleteSkillById,
});

export default [listSkills, upsertSkill, importSkill, getSkill, updateSkill, deleteSkill, listSkillVersions, getSkillVersion];
