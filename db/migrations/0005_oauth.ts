import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { defaultNow, notNull, ownedBy, timestamps } from './columns.js';
import { createTenantTable, dropTables } from './tables.js';
import { enableTenantIsolation } from './tenant-isolation.js';

/**
 * The OAuth 2.0 authorization server: users who sign in on the consent page, their workspace
 * memberships and browser sessions, dynamically registered clients, grants (one per approved consent),
 * authorization codes and access/refresh tokens.
 *
 * Users, sessions and clients span workspaces, so they have no tenant_id. Memberships, grants, codes and
 * tokens hold one workspace's data and get row-level security; the lookups by code or token hash run
 * before any tenant is known, as the connecting role, exactly like the API-key lookup.
 * Codes, tokens, sessions and client secrets are stored as SHA-256 hashes only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Stored lower-cased, so the unique constraint is case-insensitive.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', notNull)
    .$call(timestamps)
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', ownedBy('users'))
    .addColumn('tenant_id', 'text', ownedBy('tenants'))
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addPrimaryKeyConstraint('memberships_pkey', ['user_id', 'tenant_id'])
    .execute();
  await db.schema.createIndex('memberships_tenant_idx').on('memberships').column('tenant_id').execute();

  await db.schema
    .createTable('user_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', ownedBy('users'))
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addColumn('expires_at', 'timestamptz', notNull)
    .execute();
  await db.schema.createIndex('user_sessions_expires_idx').on('user_sessions').column('expires_at').execute();

  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', notNull)
    .addColumn('redirect_uris', 'jsonb', notNull)
    .addColumn('token_endpoint_auth_method', 'text', (c) =>
      c.notNull().check(sql`token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')`),
    )
    // Null for public clients (token_endpoint_auth_method 'none').
    .addColumn('secret_hash', 'text')
    .addColumn('created_at', 'timestamptz', defaultNow)
    .execute();

  await createTenantTable(db, 'oauth_grants')
    .addColumn('user_id', 'text', ownedBy('users'))
    .addColumn('client_id', 'text', ownedBy('oauth_clients'))
    .addColumn('scope', 'text', notNull)
    // The RFC 8707 resource the user consented to; null means the whole service.
    .addColumn('resource', 'text')
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('oauth_grants_tenant_idx').on('oauth_grants').column('tenant_id').execute();
  await db.schema.createIndex('oauth_grants_user_idx').on('oauth_grants').column('user_id').execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', ownedBy('tenants'))
    .addColumn('grant_id', 'text', ownedBy('oauth_grants'))
    // As sent to the authorize endpoint (null when omitted); the token request must repeat it.
    .addColumn('redirect_uri', 'text')
    .addColumn('code_challenge', 'text')
    .$call(expiring)
    .execute();
  await indexGrantAndExpiry(db, 'oauth_codes');

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('access', 'refresh')`))
    .addColumn('tenant_id', 'text', ownedBy('tenants'))
    .addColumn('grant_id', 'text', ownedBy('oauth_grants'))
    .addColumn('resource', 'text')
    // The resource's path below PUBLIC_URL ('' for the whole service), compared with request paths.
    .addColumn('resource_path', 'text')
    // used_at, for refresh tokens only: when it was exchanged for a new pair. A second use is reuse.
    .$call(expiring)
    .execute();
  await indexGrantAndExpiry(db, 'oauth_tokens');

  // Registration and sign-in attempts, counted per address or e-mail across every API process.
  await db.schema
    .createTable('oauth_rate_hits')
    .addColumn('bucket', 'text', notNull)
    .addColumn('subject', 'text', notNull)
    .addColumn('at', 'timestamptz', notNull)
    .execute();
  await db.schema.createIndex('oauth_rate_hits_idx').on('oauth_rate_hits').columns(['bucket', 'subject', 'at']).execute();

  await enableTenantIsolation(db, 'memberships', 'oauth_grants', 'oauth_codes', 'oauth_tokens');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropTables(db, 'oauth_rate_hits', 'oauth_tokens', 'oauth_codes', 'oauth_grants', 'oauth_clients', 'user_sessions', 'memberships', 'users');
}

/** A single-use credential's lifetime: issued, expires, and used (null until it is). */
function expiring<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>) {
  return table
    .addColumn('created_at', 'timestamptz', defaultNow)
    .addColumn('expires_at', 'timestamptz', notNull)
    .addColumn('used_at', 'timestamptz');
}

/** A code's or token's indexes besides its hash: by grant, and by expiry for the clean-up of expired ones. */
async function indexGrantAndExpiry(db: Kysely<unknown>, table: string): Promise<void> {
  await db.schema.createIndex(`${table}_grant_idx`).on(table).column('grant_id').execute();
  await db.schema.createIndex(`${table}_expires_idx`).on(table).column('expires_at').execute();
}
