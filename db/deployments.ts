import { sql } from 'kysely';
import type { Db } from './database.js';
import { newId } from './ids.js';
import { preparedPage, type Page, type PageQuery } from './page.js';
import type { Deployment } from './schema.js';
import { randomSecret, sha256Hex } from './secrets.js';
import type { TenantScoped, TenantTx } from './tenant-transaction.js';

/** A slug: lower-case letters, digits and inner hyphens, a DNS label (the API's schema and the chat page's path). */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$';

/** The `deployments` table: agents published under a public slug with a publishable key (docs/deployments.md). */

export const PUBLISHABLE_KEY_PREFIX = 'svc_pk_';

export function generatePublishableKey(): string {
  return randomSecret(PUBLISHABLE_KEY_PREFIX);
}

export interface DeploymentFields {
  agentId: string;
  slug: string;
  title: string | null;
  version: number | null;
  allowedOrigins: string[];
  runsPerMinute: number;
  runsPerMinutePerVisitor: number;
}

export async function insertDeployment(tx: TenantTx, tenantId: string, fields: DeploymentFields): Promise<Deployment> {
  return tx
    .insertInto('deployments')
    .values({
      id: newId('dep'),
      tenant_id: tenantId,
      agent_id: fields.agentId,
      slug: fields.slug,
      title: fields.title,
      version: fields.version,
      allowed_origins: JSON.stringify(fields.allowedOrigins),
      runs_per_minute: fields.runsPerMinute,
      runs_per_minute_per_visitor: fields.runsPerMinutePerVisitor,
      publishable_key: generatePublishableKey(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The workspace's deployment with this id, else with this slug. */
export async function findDeployment(reader: TenantScoped, tenantId: string, ref: string): Promise<Deployment | undefined> {
  const rows = await reader
    .selectFrom('deployments')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([eb('id', '=', ref), eb('slug', '=', ref)]))
    .execute();
  return rows.find((row) => row.id === ref) ?? rows[0];
}

const deploymentsPage = preparedPage('id', (db, { tenantId }: { tenantId: string }) => db.selectFrom('deployments').selectAll().where('tenant_id', '=', tenantId));

export async function listDeploymentsPage(reader: TenantScoped, tenantId: string, pageQuery: PageQuery): Promise<Page<Deployment>> {
  return deploymentsPage(reader, { tenantId }, pageQuery);
}

export async function updateDeploymentById(tx: TenantTx, tenantId: string, id: string, fields: Partial<DeploymentFields>): Promise<void> {
  await tx
    .updateTable('deployments')
    .set({
      updated_at: new Date(),
      ...(fields.agentId !== undefined && { agent_id: fields.agentId }),
      ...(fields.slug !== undefined && { slug: fields.slug }),
      ...(fields.title !== undefined && { title: fields.title }),
      ...(fields.version !== undefined && { version: fields.version }),
      ...(fields.allowedOrigins !== undefined && { allowed_origins: JSON.stringify(fields.allowedOrigins) }),
      ...(fields.runsPerMinute !== undefined && { runs_per_minute: fields.runsPerMinute }),
      ...(fields.runsPerMinutePerVisitor !== undefined && { runs_per_minute_per_visitor: fields.runsPerMinutePerVisitor }),
    })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .execute();
}

/** Replaces the publishable key: the old one stops working at once. */
export async function rotatePublishableKey(tx: TenantTx, tenantId: string, id: string): Promise<void> {
  await tx
    .updateTable('deployments')
    .set({ publishable_key: generatePublishableKey(), updated_at: new Date() })
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .execute();
}

export const VISITOR_TOKEN_PREFIX = 'svc_vt_';

/**
 * Records a thread the deployment's key just started and answers its visitor's token (256 random bits),
 * handed out once; only its hash is stored.
 */
export async function insertDeploymentThread(tx: TenantTx, tenantId: string, deploymentId: string, threadId: string): Promise<string> {
  const token = randomSecret(VISITOR_TOKEN_PREFIX);
  await tx
    .insertInto('deployment_threads')
    .values({ thread_id: threadId, tenant_id: tenantId, deployment_id: deploymentId, visitor_token_hash: sha256Hex(token) })
    .execute();
  return token;
}

/** Whether the deployment started this thread and `token` is its visitor's. */
export async function isVisitorOfThread(reader: TenantScoped, tenantId: string, deploymentId: string, threadId: string, token: string): Promise<boolean> {
  const row = await reader
    .selectFrom('deployment_threads')
    .select('thread_id')
    .where('tenant_id', '=', tenantId)
    .where('deployment_id', '=', deploymentId)
    .where('thread_id', '=', threadId)
    .where('visitor_token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteDeploymentById(tx: TenantTx, tenantId: string, id: string): Promise<void> {
  await tx.deleteFrom('deployments').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
}

/*
 * The lookups below run before any workspace is known (a request's credential, a public page), so they
 * read as the connection's own role, like db/api-keys.ts findActiveApiKey.
 */

export async function findDeploymentByPublishableKey(db: Db, key: string): Promise<Deployment | undefined> {
  return db.selectFrom('deployments').selectAll().where('publishable_key', '=', key).executeTakeFirst();
}

export async function findDeploymentBySlug(db: Db, slug: string): Promise<Deployment | undefined> {
  return db.selectFrom('deployments').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Whether any deployment lists this origin: what a CORS preflight, which carries no credential, can know. */
export async function isOriginOfAnyDeployment(db: Db, origin: string): Promise<boolean> {
  const row = await db
    .selectFrom('deployments')
    .select('id')
    .where(sql<boolean>`allowed_origins @> ${JSON.stringify([origin])}::jsonb`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
