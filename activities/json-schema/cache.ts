import type { JsonSchema } from './types.js';

/**
 * Memoizes `compile` per distinct JSON Schema (by its JSON text) in a small LRU. Callers give each schema
 * an Ajv of its own: ajv keeps every schema it ever compiled, and two tenants' schemas may share an `$id`,
 * so one shared instance would grow without bound and mix tenants up.
 */
export function schemaCache<V>(compile: (schema: JsonSchema) => V, max = 256): (schema: JsonSchema) => V {
  const entries = new Map<string, V>();
  return (schema) => {
    const key = JSON.stringify(schema);
    let value = entries.get(key);
    if (value !== undefined) {
      entries.delete(key); // re-inserted below as the most recently used
    } else {
      value = compile(schema);
    }
    entries.set(key, value);
    if (entries.size > max) entries.delete(entries.keys().next().value!);
    return value;
  };
}
