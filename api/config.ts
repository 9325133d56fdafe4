import { integerSetting } from '../db/integer-settings.js';

/**
 * The service's settings, all from the environment (README lists them). Database settings live in
 * db/config.ts; the embedded Temporal dev server reads temporal-dev.yaml.
 */
export interface ServiceConfig {
  host: string;
  port: number;
  /** The address clients use to reach the API, printed on start and used in absolute links. */
  publicUrl: string;
  /** host:port of an external Temporal frontend; unset means the launcher starts a dev server. */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  /** Name of the workspace created on first start, and its management key if one is given. */
  initWorkspace: string;
  initApiKey: string | undefined;
}

export function serviceConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const host = env.HOST ?? '127.0.0.1';
  const port = integerSetting('PORT', env) ?? 8080;
  return {
    host,
    port,
    publicUrl: env.PUBLIC_URL ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    initWorkspace: env.INIT_WORKSPACE ?? 'default',
    initApiKey: env.INIT_API_KEY || undefined,
  };
}
