/**
 * A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain object. Shared by the API's operation
 * declarations, tool argument schemas, guardrail configs and model tool definitions, so it lives here
 * rather than in `api/`: domain code never imports the API.
 */
export type JsonSchema = { [keyword: string]: unknown };
