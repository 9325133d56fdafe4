import type { Db } from '../../db/database.js';
import { findProviderConnection, secretContext } from '../../db/provider-connections.js';
import type { ProviderConnectionRow } from '../../db/schema.js';
import { withTenant } from '../../db/tenant-transaction.js';
import { openSecret, SecretsUnavailableError, SecretUnreadableError } from '../secrets/secret-box.js';
import { ModelConfigurationError } from './errors.js';
import type { ProviderConnection } from './provider-connection.js';
import { modelSettingsFromEnv, type ModelSettings } from './settings.js';

/**
 * The model settings of one workspace: its own provider connections first (read and opened at call
 * time, in the worker, so no secret is ever in a workflow's input, its history or a run event), then
 * the server's environment.
 */
export function workspaceModelSettings(db: Db, tenantId: string, env: NodeJS.ProcessEnv = process.env): ModelSettings {
  return { ...modelSettingsFromEnv(env), workspaceConnection: (name) => loadProviderConnection(db, tenantId, name) };
}

/** The workspace's connection named `name`, its secrets opened; undefined when it has none by that name. */
export async function loadProviderConnection(db: Db, tenantId: string, name: string): Promise<ProviderConnection | undefined> {
  const row = await withTenant(db, tenantId, (tx) => findProviderConnection(tx, tenantId, name));
  return row && openProviderConnection(row);
}

/** A stored connection with its key and headers opened; a secret no key opens is a configuration error. */
export async function openProviderConnection(row: ProviderConnectionRow): Promise<ProviderConnection> {
  try {
    return {
      name: row.name,
      kind: row.kind,
      baseURL: row.base_url,
      apiKey: row.api_key === null ? undefined : await openSecret(row.api_key, secretContext(row.tenant_id, row.id, 'api_key')),
      headers: row.headers === null ? {} : parseHeaders(await openSecret(row.headers, secretContext(row.tenant_id, row.id, 'headers'))),
    };
  } catch (err) {
    if (err instanceof SecretsUnavailableError || err instanceof SecretUnreadableError) {
      throw new ModelConfigurationError(`provider connection '${row.name}': ${err.message}`);
    }
    throw err;
  }
}

/** The opened headers' JSON object; a parse error would quote the secret text, so it says only what is wrong. */
function parseHeaders(text: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SecretUnreadableError('the stored headers are not a JSON object');
  }
  const valid = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && Object.values(parsed).every((value) => typeof value === 'string');
  if (!valid) throw new SecretUnreadableError('the stored headers are not a JSON object of strings');
  return parsed as Record<string, string>;
}
