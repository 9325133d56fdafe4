import { sql, type Kysely } from 'kysely';
import { enableTenantIsolation } from './0001_foundation.js';

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
  const now = sql`now()`;

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Stored lower-cased, so the unique constraint is case-insensitive.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('memberships_pkey', ['user_id', 'tenant_id'])
    .execute();
  await db.schema.createIndex('memberships_tenant_idx').on('memberships').column('tenant_id').execute();

  await db.schema
    .createTable('user_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_sessions_expires_idx').on('user_sessions').column('expires_at').execute();

  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('redirect_uris', 'jsonb', (c) => c.notNull())
    .addColumn('token_endpoint_auth_method', 'text', (c) =>
      c.notNull().check(sql`token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')`),
    )
    // Null for public clients (token_endpoint_auth_method 'none').
    .addColumn('secret_hash', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('oauth_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    // The RFC 8707 resource the user consented to; null means the whole service.
    .addColumn('resource', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('oauth_grants_tenant_idx').on('oauth_grants').column('tenant_id').execute();
  await db.schema.createIndex('oauth_grants_user_idx').on('oauth_grants').column('user_id').execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    // As sent to the authorize endpoint (null when omitted); the token request must repeat it.
    .addColumn('redirect_uri', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('oauth_codes_grant_idx').on('oauth_codes').column('grant_id').execute();
  await db.schema.createIndex('oauth_codes_expires_idx').on('oauth_codes').column('expires_at').execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('access', 'refresh')`))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('grant_id', 'text', (c) => c.notNull().references('oauth_grants.id').onDelete('cascade'))
    .addColumn('resource', 'text')
    // The resource's path below PUBLIC_URL ('' for the whole service), compared with request paths.
    .addColumn('resource_path', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(now))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    // Refresh tokens only: when it was exchanged for a new pair. A second use is reuse.
    .addColumn('used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('oauth_tokens_grant_idx').on('oauth_tokens').column('grant_id').execute();
  await db.schema.createIndex('oauth_tokens_expires_idx').on('oauth_tokens').column('expires_at').execute();

  // Registration and sign-in attempts, counted per address or e-mail across every API process.
  await db.schema
    .createTable('oauth_rate_hits')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_rate_hits_idx').on('oauth_rate_hits').columns(['bucket', 'subject', 'at']).execute();

  for (const table of ['memberships', 'oauth_grants', 'oauth_codes', 'oauth_tokens']) {
    await enableTenantIsolation(db, table);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['oauth_rate_hits', 'oauth_tokens', 'oauth_codes', 'oauth_grants', 'oauth_clients', 'user_sessions', 'memberships', 'users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
