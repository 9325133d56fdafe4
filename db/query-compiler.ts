import { DummyDriver, Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { TenantScoped } from './tenant-transaction.js';
import { postgresDialectWithDriver } from './wrapped-driver.js';

/**
 * Builds and compiles Postgres SQL and never connects (Kysely's way to compile without a database), for
 * queries that run somewhere other than through Kysely's executor (db/prepared-query.ts,
 * db/tenant-statement.ts). Typed as tenant-scoped so that the repositories' query builders take it;
 * what it compiles runs as a tenant wherever it is sent. Executing on it returns no rows.
 */
export const queryCompiler = new Kysely<Database>({ dialect: postgresDialectWithDriver(() => new DummyDriver()) }) as TenantScoped;
