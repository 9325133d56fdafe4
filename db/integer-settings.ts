/**
 * Every integer setting the platform reads from the environment, with the values it accepts. One table
 * so that each process checks them all when it starts (`checkIntegerSettings`, from runProcess) and a
 * typo fails the start naming the setting, instead of running with NaN or quietly with the default
 * wherever the setting happens to be read later (some are read per call: a stream's pings, a webhook
 * attempt). Defaults stay with the code that uses them (`integerSetting(...) ?? default`), and the
 * README's configuration table documents each one (a test holds the two together).
 *
 * It lives in db/ because db/ imports nothing outside itself and everything else may import db/.
 */
interface IntegerSettingRule {
  min: number;
  max?: number;
}

const PORT_RULE = { min: 0, max: 65_535 };
const POSITIVE = { min: 1 };

export const INTEGER_SETTINGS = {
  PORT: PORT_RULE,
  TEMPORAL_DEV_PORT: { min: 1, max: 65_535 },
  TEMPORAL_DEV_UI_PORT: { min: 1, max: 65_535 },
  DATABASE_POOL_SIZE: POSITIVE,
  DATABASE_READ_POOL_SIZE: POSITIVE,
  DATABASE_POOL_IDLE_MS: { min: 0 },
  WORKER_MAX_CONCURRENT_ACTIVITIES: POSITIVE,
  // Node's vm takes a timeout up to 2^32 - 1 ms.
  WORKFLOW_ACTIVATION_TIMEOUT_MS: { min: 0, max: 4_294_967_295 },
  RUN_HISTORY_ARCHIVER_CHECK_MS: { min: 100 },
  STRANDED_WORK_CHECK_MS: { min: 100 },
  SSE_PING_INTERVAL_MS: POSITIVE,
  STREAMS_PER_WORKSPACE: POSITIVE,
  STREAMS_PER_VISITOR: POSITIVE,
  MCP_STREAM_WAIT_MS: POSITIVE,
  PROVIDER_IDLE_TIMEOUT_MS: POSITIVE,
  EXPERIMENT_CELLS_PER_WORKFLOW_RUN: POSITIVE,
  WEBHOOK_ATTEMPT_TIMEOUT_MS: POSITIVE,
  WEBHOOK_RETRY_INITIAL_MS: POSITIVE,
  WEBHOOK_RETRY_MAX_MS: POSITIVE,
  WEBHOOK_RETRY_WINDOW_MS: POSITIVE,
  BROWSER_MAX_CONCURRENT: { min: 1, max: 9_999 },
  EMBEDDING_THREADS: { min: 1, max: 64 },
} as const satisfies Record<string, IntegerSettingRule>;

export type IntegerSettingName = keyof typeof INTEGER_SETTINGS;

/**
 * The setting's value, or undefined when it is unset or empty (the caller's default applies). Anything
 * but a decimal integer within the setting's bounds throws, naming the setting and what it accepts.
 */
export function integerSetting(name: IntegerSettingName, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const rule: IntegerSettingRule = INTEGER_SETTINGS[name];
  const value = /^[+-]?\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= rule.min && value <= (rule.max ?? Number.MAX_SAFE_INTEGER))) {
    throw new Error(`${name} must be ${describeRule(rule)}, not '${env[name]}'`);
  }
  return value;
}

/** Reads every integer setting once, so that the first bad one stops the start. */
export function checkIntegerSettings(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of Object.keys(INTEGER_SETTINGS) as IntegerSettingName[]) integerSetting(name, env);
}

function describeRule(rule: IntegerSettingRule): string {
  if (rule.max !== undefined) return `an integer from ${rule.min} to ${rule.max}`;
  return rule.min === 1 ? 'a positive integer' : `an integer of at least ${rule.min}`;
}
