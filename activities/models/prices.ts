import { Decimal } from 'decimal.js';
import { parseModelId } from './model-id.js';
import type { TurnUsage } from './types.js';

// Usage sums belong with costs for the caller; they live in usage.ts.
export { sumUsage, type UsageSum } from './usage.js';

/** USD per million tokens, as decimal strings so no price is ever a binary fraction. */
export interface ModelPrice {
  prompt: string;
  completion: string;
}

/**
 * List prices (USD per million tokens) of common models. A `provider/*` entry prices every model of
 * the provider that has no entry of its own. `scripted` has odd prices on purpose, so tests see
 * exact, non-trivial decimals.
 */
export const BUILT_IN_PRICES: Readonly<Record<string, ModelPrice>> = {
  'openai/gpt-4.1': { prompt: '2', completion: '8' },
  'openai/gpt-4.1-mini': { prompt: '0.4', completion: '1.6' },
  'openai/gpt-4.1-nano': { prompt: '0.1', completion: '0.4' },
  'openai/gpt-4o': { prompt: '2.5', completion: '10' },
  'openai/gpt-4o-mini': { prompt: '0.15', completion: '0.6' },
  'openai/o4-mini': { prompt: '1.1', completion: '4.4' },
  'anthropic/claude-sonnet-4-5': { prompt: '3', completion: '15' },
  'anthropic/claude-sonnet-4-5-20250929': { prompt: '3', completion: '15' },
  'anthropic/claude-opus-4-1': { prompt: '15', completion: '75' },
  'anthropic/claude-opus-4-1-20250805': { prompt: '15', completion: '75' },
  'anthropic/claude-haiku-4-5': { prompt: '1', completion: '5' },
  'anthropic/claude-haiku-4-5-20251001': { prompt: '1', completion: '5' },
  'ollama/*': { prompt: '0', completion: '0' }, // runs on your own hardware
  scripted: { prompt: '1.25', completion: '2.5' },
  'scripted/*': { prompt: '1.25', completion: '2.5' },
};

const DECIMAL = /^\d+(\.\d+)?$/;
const PRICE_KEY = /^[^/\s]+\/\S+$|^scripted$/;

/**
 * The built-in prices with env `MODEL_PRICES` merged over them: JSON like
 * `{"openai/gpt-4.1": {"prompt": "2", "completion": "8"}, "ollama/*": {...}}`. Throws on a malformed
 * value; call it at startup to fail there rather than at the first run's end.
 */
export function priceTableFromEnv(env: NodeJS.ProcessEnv = process.env): Readonly<Record<string, ModelPrice>> {
  if (!env.MODEL_PRICES) return BUILT_IN_PRICES;
  return { ...BUILT_IN_PRICES, ...parsePriceOverrides(env.MODEL_PRICES) };
}

function parsePriceOverrides(json: string): Record<string, ModelPrice> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`MODEL_PRICES is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!isPlainObject(parsed)) {
    throw new Error('MODEL_PRICES must be a JSON object of "provider/model": {"prompt": "...", "completion": "..."}');
  }

  const overrides: Record<string, ModelPrice> = {};
  for (const [model, entry] of Object.entries(parsed)) {
    if (!PRICE_KEY.test(model)) throw new Error(`MODEL_PRICES: '${model}' is not a model id like 'openai/gpt-4.1' or 'ollama/*'`);
    if (!isPlainObject(entry) || Object.keys(entry).sort().join() !== 'completion,prompt') {
      throw new Error(`MODEL_PRICES['${model}'] must be {"prompt": "<USD per million>", "completion": "<USD per million>"}`);
    }
    for (const part of ['prompt', 'completion'] as const) {
      const value = entry[part];
      // Numbers are refused too: 0.1 in JSON is already a binary approximation.
      if (typeof value !== 'string' || !DECIMAL.test(value)) {
        throw new Error(`MODEL_PRICES['${model}'].${part} must be a decimal string such as "0.15", not ${JSON.stringify(value)}`);
      }
    }
    overrides[model] = { prompt: entry.prompt as string, completion: entry.completion as string };
  }
  return overrides;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A workspace's prices from its provider connections: by connection name, then model name (the part
 * after `provider/`) or `*` for every model of the connection (db/provider-connections.ts).
 */
export type WorkspacePrices = ReadonlyMap<string, Readonly<Record<string, ModelPrice>>>;

/**
 * The price the workspace's connection of the model's provider sets for it (or for `*`), else the
 * model's own price, else its provider's `provider/*` price, else null (unknown).
 */
export function priceFor(model: string, env: NodeJS.ProcessEnv = process.env, workspace?: WorkspacePrices): ModelPrice | null {
  const id = parseModelId(model);
  const connection = workspace?.get(id.provider);
  const own = connection && (ownEntry(connection, id.model) ?? ownEntry(connection, '*'));
  if (own) return own;
  const table = priceTableFromEnv(env);
  return ownEntry(table, model) ?? ownEntry(table, `${id.provider}/*`) ?? null;
}

/** `table[key]` only when the table itself has it: a model named `constructor` must not find Object's. */
function ownEntry(table: Readonly<Record<string, ModelPrice>>, key: string): ModelPrice | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

// Enough digits that token counts times any configured price are never rounded.
const ExactDecimal = Decimal.clone({ precision: 100 });

/**
 * The exact cost in USD as a plain decimal string ('0.00296', '0'), or null when a token count or
 * the model's price is unknown: an unknown cost is not a zero cost.
 */
export function costUsd(model: string, usage: TurnUsage, env: NodeJS.ProcessEnv = process.env, workspace?: WorkspacePrices): string | null {
  const price = priceFor(model, env, workspace);
  if (!price || usage.prompt_tokens === null || usage.completion_tokens === null) return null;
  const promptMicros = new ExactDecimal(usage.prompt_tokens).times(price.prompt);
  const completionMicros = new ExactDecimal(usage.completion_tokens).times(price.completion);
  return promptMicros.plus(completionMicros).dividedBy(1_000_000).toFixed(); // toFixed() never uses exponent notation
}
