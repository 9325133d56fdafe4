import { sql, type Kysely } from 'kysely';
import { notNull, timestamps } from './columns.js';
import { createNamedTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * A workspace's own model provider connections (docs/providers.md). The API key and the extra headers
 * are stored sealed (JWE, activities/secrets/secret-box.ts); only the key's last four characters and
 * the headers' names are kept in the clear, for display.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await createNamedTenantTable(db, 'provider_connections')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('openai', 'anthropic', 'openai_compatible')`))
    .addColumn('base_url', 'text', notNull)
    .addColumn('api_key', 'text')
    .addColumn('api_key_last4', 'text')
    .addColumn('headers', 'text')
    .addColumn('header_names', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('prices', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .$call(timestamps)
    .execute();
  await enableTenantIsolation(db, 'provider_connections');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'provider_connections');
}
