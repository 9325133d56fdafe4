import { TemplateError, templateVariables } from '../../activities/prompts/template.js';
import {
  addPromptVersionIfChanged,
  deletePromptById,
  findPrompt,
  findPromptVersion,
  insertPromptIfNew,
  listPromptsPage,
  listVersionsOfPrompt,
  lockPrompt,
  lockPromptByName,
  renamePrompt,
  type PromptContent,
} from '../../db/prompts.js';
import type { Prompt, PromptVersion } from '../../db/schema.js';
import { invalidRequest, notFound, orNotFound } from '../errors.js';
import { defineOperation, type JsonSchema } from '../operation.js';
import { defineDeleteOperation } from '../delete-operation.js';
import { defineListOperation } from '../list-operation.js';
import { conflictIfNameTaken } from '../name-conflict.js';
import { refOr404 } from '../ref-or-404.js';
import { pick, timestampsJson } from '../row-json.js';
import { closedObject, nameSchema, MAX_REQUEST_INTEGER, pathParams, timestamp, upsertResultOf } from '../schemas.js';
import { isoTimestamp } from '../iso-timestamp.js';

const TAG = 'Prompts';

const promptName = nameSchema();
const template: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100_000,
  description: 'The template: `{{name}}` is replaced by the variable `name`; `\\{{` is a literal `{{`.',
};
const nameParams = pathParams(['name']);

const promptSchema = closedObject({
  id: { type: 'string' },
  name: { type: 'string' },
  version: { type: 'integer', description: 'The current version; bumped by edits of template, description or model.' },
  template: { type: 'string' },
  description: { type: ['string', 'null'] },
  model: { type: ['string', 'null'], description: 'The default model of graph nodes that use this prompt.' },
  variables: { type: 'array', items: { type: 'string' }, description: 'The variables the template uses.' },
  created_at: timestamp,
  updated_at: timestamp,
});
const promptBody = closedObject({ prompt: promptSchema });

const versionSchema = closedObject({
  prompt_id: { type: 'string' },
  version: { type: 'integer' },
  version_id: { type: 'string' },
  template: { type: 'string' },
  description: { type: ['string', 'null'] },
  model: { type: ['string', 'null'] },
  created_at: timestamp,
});

function promptJson(prompt: Prompt, current: PromptVersion) {
  return {
    ...pick(prompt, ['id', 'name', 'version']),
    ...pick(current, ['template', 'description', 'model']),
    variables: templateVariables(current.template),
    ...timestampsJson(prompt),
  };
}

function versionJson(version: PromptVersion) {
  return {
    prompt_id: version.prompt_id,
    version: version.version,
    version_id: version.id,
    ...pick(version, ['template', 'description', 'model']),
    created_at: isoTimestamp(version.created_at),
  };
}

/** The prompt `ref` names with its current version, or 404; locked, for an edit, by `lockedPromptOr404`. */
const promptOr404 = refOr404(findPrompt, 'prompt');
const lockedPromptOr404 = refOr404(lockPrompt, 'prompt');

function checkTemplate(text: string | undefined): void {
  if (text === undefined) return;
  try {
    templateVariables(text);
  } catch (err) {
    if (err instanceof TemplateError) throw invalidRequest(err.message, [{ field: 'body.template', message: err.message }]);
    throw err;
  }
}

export const listPrompts = defineListOperation({
  operationId: 'listPrompts',
  path: '/v1/prompts',
  tag: TAG,
  summary: 'Prompts with their current version, oldest first',
  plural: 'prompts',
  pageDescription: 'A page of prompts',
  itemSchema: promptSchema,
  page: listPromptsPage,
  toJson: ({ prompt, current }) => promptJson(prompt, current),
});

export const upsertPrompt = defineOperation<Record<string, never>, unknown, { name: string; template: string; description?: string; model?: string }>({
  operationId: 'upsertPrompt',
  method: 'post',
  path: '/v1/prompts',
  tag: TAG,
  summary: 'Create a prompt, or update the one with this name',
  description:
    'The body is the whole definition: an omitted `description` or `model` is null. When the name exists and the template, ' +
    'description or model differ from the current version, they become a new version (200); identical content changes nothing.',
  access: 'key',
  body: closedObject(
    { name: promptName, template, description: { type: 'string', maxLength: 10_000 }, model: { type: 'string', minLength: 1, maxLength: 200 } },
    { required: ['name', 'template'] },
  ),
  responses: {
    201: { description: 'Created, as version 1', schema: upsertResultOf('prompt', promptSchema) },
    200: { description: 'A prompt with this name existed; it is updated when the content differs', schema: upsertResultOf('prompt', promptSchema) },
  },
  handler: async ({ body, caller, tenant }) => {
    checkTemplate(body.template);
    const content: PromptContent = { template: body.template, description: body.description ?? null, model: body.model ?? null };
    const { prompt, current, created } = await tenant(async (tx) => {
      const inserted = await insertPromptIfNew(tx, caller.tenantId, body.name, content);
      if (inserted) return { ...inserted, created: true };
      const found = orNotFound(await lockPromptByName(tx, caller.tenantId, body.name), 'prompt', body.name);
      return { ...(await addPromptVersionIfChanged(tx, found, content)), created: false };
    });
    return { status: created ? 201 : 200, body: { prompt: promptJson(prompt, current), created } };
  },
});

export const getPrompt = defineOperation<{ name: string }>({
  operationId: 'getPrompt',
  method: 'get',
  path: '/v1/prompts/{name}',
  tag: TAG,
  summary: 'A prompt (by name or id) with its current version',
  access: 'key',
  params: nameParams,
  errors: ['not_found'],
  responses: { 200: { description: 'The prompt', schema: promptBody } },
  handler: async ({ params, caller, tenantReads }) => {
    const { prompt, current } = await tenantReads((reader) => promptOr404(reader, caller.tenantId, params.name));
    return { status: 200, body: { prompt: promptJson(prompt, current) } };
  },
});

export const listPromptVersions = defineOperation<{ name: string }>({
  operationId: 'listPromptVersions',
  method: 'get',
  path: '/v1/prompts/{name}/versions',
  tag: TAG,
  summary: 'Every version of a prompt, newest first',
  access: 'key',
  params: nameParams,
  errors: ['not_found'],
  responses: {
    200: {
      description: 'The versions',
      schema: closedObject({ prompt_id: { type: 'string' }, name: { type: 'string' }, versions: { type: 'array', items: versionSchema } }),
    },
  },
  handler: async ({ params, caller, tenantReads }) => {
    const { prompt, versions } = await tenantReads(async (reader) => {
      const { prompt } = await promptOr404(reader, caller.tenantId, params.name);
      return { prompt, versions: await listVersionsOfPrompt(reader, caller.tenantId, prompt.id) };
    });
    return { status: 200, body: { prompt_id: prompt.id, name: prompt.name, versions: versions.map(versionJson) } };
  },
});

export const getPromptVersion = defineOperation<{ name: string; version: number }>({
  operationId: 'getPromptVersion',
  method: 'get',
  path: '/v1/prompts/{name}/versions/{version}',
  tag: TAG,
  summary: 'One version of a prompt',
  access: 'key',
  params: { type: 'object', required: ['name', 'version'], properties: { name: { type: 'string', minLength: 1 }, version: { type: 'integer', minimum: 1, maximum: MAX_REQUEST_INTEGER } } },
  errors: ['not_found'],
  responses: { 200: { description: 'The version', schema: closedObject({ version: versionSchema }) } },
  handler: async ({ params, caller, tenantReads }) => {
    const version = await tenantReads(async (reader) => {
      const { prompt } = await promptOr404(reader, caller.tenantId, params.name);
      return findPromptVersion(reader, caller.tenantId, prompt.id, params.version);
    });
    if (!version) throw notFound('prompt version', `${params.name}@${params.version}`);
    return { status: 200, body: { version: versionJson(version) } };
  },
});

export const updatePrompt = defineOperation<{ name: string }, unknown, { name?: string; template?: string; description?: string | null; model?: string | null }>({
  operationId: 'updatePrompt',
  method: 'patch',
  path: '/v1/prompts/{name}',
  tag: TAG,
  summary: 'Rename or edit a prompt (management keys only)',
  description: 'Editing template, description or model makes a new version; a rename alone does not.',
  access: 'management',
  params: nameParams,
  body: {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: {
      name: promptName,
      template,
      description: { type: ['string', 'null'], maxLength: 10_000 },
      model: { type: ['string', 'null'], minLength: 1, maxLength: 200 },
    },
  },
  errors: ['not_found', 'conflict'],
  responses: { 200: { description: 'The prompt', schema: promptBody } },
  handler: async ({ params, body, caller, tenant }) => {
    checkTemplate(body.template);
    const { prompt, current } = await conflictIfNameTaken(`a prompt named '${body.name}' already exists`, () =>
      tenant(async (tx) => {
        const found = await lockedPromptOr404(tx, caller.tenantId, params.name);
        let { prompt } = found;
        if (body.name !== undefined && body.name !== prompt.name) prompt = await renamePrompt(tx, prompt, body.name);
        return addPromptVersionIfChanged(tx, { prompt, current: found.current }, {
          template: body.template ?? found.current.template,
          description: body.description === undefined ? found.current.description : body.description,
          model: body.model === undefined ? found.current.model : body.model,
        });
      }),
    );
    return { status: 200, body: { prompt: promptJson(prompt, current) } };
  },
});

export const deletePrompt = defineDeleteOperation<{ name: string }>({
  operationId: 'deletePrompt',
  path: '/v1/prompts/{name}',
  tag: TAG,
  summary: 'Delete a prompt and all its versions',
  params: nameParams,
  find: async (tx, tenantId, { name }) => (await lockedPromptOr404(tx, tenantId, name)).prompt,
  deleteById: deletePromptById,
});

export default [listPrompts, upsertPrompt, getPrompt, updatePrompt, deletePrompt, listPromptVersions, getPromptVersion];
