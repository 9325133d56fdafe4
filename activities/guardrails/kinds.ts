import type { GuardrailKindDefinition } from './kind-definition.js';
import { jsonSchemaGuardrail } from './json-schema-guardrail.js';
import { keywordGuardrail } from './keyword-guardrail.js';
import { maxLengthGuardrail } from './max-length-guardrail.js';
import { piiGuardrail } from './pii-guardrail.js';
import { regexGuardrail } from './regex-guardrail.js';
import { semanticGuardrail } from './semantic-guardrail.js';
import type { GuardrailKind } from './types.js';

/** Each kind's behaviour; its config shape is in config-schemas.ts. */
export const GUARDRAIL_KIND_DEFINITIONS: Record<GuardrailKind, GuardrailKindDefinition<unknown>> = {
  pii: piiGuardrail,
  regex: regexGuardrail,
  keyword: keywordGuardrail,
  max_length: maxLengthGuardrail,
  json_schema: jsonSchemaGuardrail,
  semantic: semanticGuardrail,
};
