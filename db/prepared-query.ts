import { CompiledQuery, type Compilable } from 'kysely';
import { queryCompiler } from './query-compiler.js';
import { directRead } from './tenant-reads.js';
import type { TenantScoped } from './tenant-transaction.js';

/**
 * A query built and compiled once per shape, then run with each call's values.
 *
 * Why: Kysely builds its operation tree and compiles it to SQL on every call. For a plain list request
 * that was ~20 % of the API's CPU (docs/performance.md), and the same work every time: only the values
 * change.
 *
 * How: `build` is called with a placeholder for each value, compiled once, and the positions the
 * placeholders took among the SQL's parameters are remembered; a call fills those positions with its
 * values. A value that is `undefined` is absent — `build` gets `undefined` for it and may leave its
 * condition out — so a query has one shape per set of present values, each compiled on first use.
 * Everything else `build` puts in the query is fixed at that moment.
 *
 * So `build` must take everything that varies from `values` — a value it reads from anywhere else is
 * fixed into the shape for every later call — and treat the values as opaque: pass each to Kysely as
 * one value (`where`, `limit`, …) or test its presence with `!== undefined`, nothing else. A
 * placeholder is a truthy object, so `if (values.x)` is true for `''`, `0` and `null` as well; callers
 * that mean "empty is absent" pass `x || undefined`. A present `null` is a parameter (`= null`, never
 * Kysely's `is null`). A placeholder used as a string or number (compared, concatenated) throws, and one
 * that does not become a parameter is refused when its shape is compiled; a list is not one value (`in`
 * takes one placeholder per item; `= any(…)` takes an array as one). Compiled for Postgres; PGlite
 * speaks the same SQL.
 */
export interface PreparedQuery<Values, Row> {
  execute(db: TenantScoped, values: Values): Promise<Row[]>;
}

export function preparedQuery<Values extends object, Row>(build: (db: TenantScoped, values: Values) => Compilable<Row>): PreparedQuery<Values, Row> {
  const shapes = new Map<string, Shape>();
  return {
    async execute(db, values) {
      const present = presentNames(values);
      let shape = shapes.get(present.key);
      if (!shape) {
        shape = compileShape(build, present.names);
        shapes.set(present.key, shape);
      }
      const parameters = shape.parameters.map((parameter) => (parameter instanceof Placeholder ? (values as Record<string, unknown>)[parameter.name] : parameter));
      // On the tenant read pool the query skips Kysely's executor (db/tenant-reads.ts); elsewhere it runs through it.
      const direct = directRead(db);
      if (direct) return (await direct(shape.sql, parameters)) as Row[];
      return (await db.executeQuery<Row>(CompiledQuery.raw(shape.sql, parameters))).rows;
    },
  };
}

/** The compiled SQL of one shape, its parameters either fixed values or the placeholders to fill. */
interface Shape {
  sql: string;
  parameters: readonly unknown[];
}

/** Stands for a value while the query is built. */
class Placeholder {
  constructor(readonly name: string) {}

  [Symbol.toPrimitive](): never {
    throw new Error(`preparedQuery: the value '${this.name}' was used while building the query; only pass it to Kysely or test its presence`);
  }
}

function compileShape<Values>(build: (db: TenantScoped, values: Values) => Compilable<unknown>, names: string[]): Shape {
  const placeholders = Object.fromEntries(names.map((name) => [name, new Placeholder(name)])) as Values;
  const compiled = build(queryCompiler, placeholders).compile();
  const unused = names.filter((name) => !compiled.parameters.includes((placeholders as Record<string, unknown>)[name]));
  if (unused.length > 0) {
    throw new Error(`preparedQuery: ${unused.join(', ')} did not become a parameter of the query (unused, or not a single value)`);
  }
  return { sql: compiled.sql, parameters: compiled.parameters };
}

function presentNames(values: object): { names: string[]; key: string } {
  const names: string[] = [];
  for (const name of Object.keys(values)) if ((values as Record<string, unknown>)[name] !== undefined) names.push(name);
  return { names, key: names.join(',') };
}
