/**
 * A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain object. Shared by the API's operation
 * declarations, tool argument schemas, guardrail configs and model tool definitions, so it lives here
 * rather than in `api/`: domain code never imports the API.
 */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * The largest integer a request may carry: Postgres' `integer` (int4). A larger one would fail a query
 * as a 500 (`version`, `after`) or overflow a timer, so every integer of a request schema has it as
 * its `maximum` at most.
 */
export const MAX_REQUEST_INTEGER = 2_147_483_647;
