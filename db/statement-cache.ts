import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * Statements Postgres parses and plans once per connection instead of on every call.
 *
 * Why: node-postgres sends every parameterized statement unnamed, and Postgres parses, rewrites and plans
 * an unnamed statement each time it runs. Measured with pg_stat_statements over the runs benchmark,
 * planning was more than half of the server's time per run (5.6 of ~10.5 ms; the event log's append
 * alone 0.29 ms of planning a call, eight calls a run), on the two cores the platform's processes share
 * (docs/performance.md).
 *
 * How, as pgjdbc does it: a statement text is prepared (a named statement on its connection, Postgres'
 * plan cache behind it) once it has been run `USES_BEFORE_PREPARING` times in this process, so a text
 * seen once (a literal spelled into it) never takes a name. Postgres keeps deciding per execution
 * between a generic plan and one for the values (its `plan_cache_mode`), and replans by itself when a
 * table or index changes. Only statements with parameters are named: a text without any may be several
 * statements, which a named statement cannot be. Names are never reused on a connection, so nothing is
 * deallocated: a connection's statements end with it. So each connection gives at most
 * `PREPARED_PER_CONNECTION` names and then runs new texts unnamed, as before; a prepared statement held
 * 31 KB of the server's memory for a plain select and 169 KB for the event log's append (measured with
 * pg_backend_memory_contexts), so that bounds each connection at a few MB.
 *
 * What a prepared statement adds: Postgres keeps the result columns and parameter types it found at the
 * first Parse. Once a migration changes them under a running process (columns added under a `select *`,
 * a column's type), the statement fails ("cached plan must not change result type", "operator does not
 * exist"). After such an error (`MENDED_BY_A_NEW_PARSE`) the text takes a new name on every connection
 * of the process at its next run, and one that ran in a transaction of its own runs again at once, once
 * (nothing else was in its transaction); inside a transaction it fails that transaction as any error
 * does, once per process.
 *
 * Off with `DATABASE_PREPARED_STATEMENTS=off`: to measure what it gives, and a way back should a
 * generic plan ever serve some query worse than planning each call did.
 */
export class StatementCachingClient extends pg.Client {
  /** The name each text runs under on this connection, and the text's generation it was given in. */
  private readonly names = new Map<string, { name: string; generation: number }>();
  private namesGiven = 0;

  /** The name `text` runs under on this connection, or undefined to run it unnamed. */
  statementName(text: string, parameterCount: number): string | undefined {
    if (parameterCount === 0) return undefined;
    const generation = generationOf(text);
    const known = this.names.get(text);
    if (known?.generation === generation) return known.name;
    if (!isHot(text) || this.namesGiven >= PREPARED_PER_CONNECTION) return undefined;
    const name = `ap_${++this.namesGiven}`;
    this.names.set(text, { name, generation });
    return name;
  }

  /**
   * After `err` from `text`'s named statement: true when the error is the statement's (see above), and
   * the text then takes a new name on every connection at its next run.
   */
  renameAfter(err: unknown, text: string): boolean {
    if (!MENDED_BY_A_NEW_PARSE.has((err as { code?: unknown } | undefined)?.code)) return false;
    // Only the first connection to find a generation stale moves the text on; the others' errors are the same one.
    const generation = generationOf(text);
    if (this.names.get(text)?.generation === generation) newGeneration(text, generation);
    return true;
  }

  // node-postgres' `query` has many forms; (text, values), answered by a promise (Kysely, the repositories)
  // or a callback (the pool's own `query`), is named here. Anything else (a Query or cursor object) is as before.
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    if (typeof text === 'string' && Array.isArray(values) && (callback === undefined || typeof callback === 'function')) {
      const name = this.statementName(text, values.length);
      if (name) {
        const answered = this.namedQuery(name, text, values);
        if (!callback) return answered as never;
        answered.then((result) => callback(null, result), (err: unknown) => callback(err));
        return undefined as never;
      }
    }
    return (super.query as (...forwarded: unknown[]) => never)(...args);
  }

  private async namedQuery(name: string, text: string, values: unknown[], again = false): Promise<pg.QueryResult> {
    // Converted before anything is sent: a value node-postgres failed to convert mid-protocol would make it
    // close the statement on the server while still counting it as parsed.
    const converted = values.map((value) => prepareValue(value));
    const standalone = this.getTransactionStatus() === 'I';
    try {
      return await super.query({ name, text, values: converted });
    } catch (err) {
      if (!this.renameAfter(err, text) || !standalone || again) throw err;
      const renamed = this.statementName(text, values.length);
      return renamed ? this.namedQuery(renamed, text, converted, true) : super.query(text, converted);
    }
  }
}

/** Runs of a text in this process before connections prepare it. */
export const USES_BEFORE_PREPARING = 3;
/** Names one connection gives at most. */
export const PREPARED_PER_CONNECTION = 100;
/** Texts counted at once: beyond this the counts start over, so texts that are never repeated cannot pile up. */
const TEXTS_COUNTED = 5_000;
/**
 * The errors of a prepared statement that parsing its text again can mend (SQLSTATE): its result columns
 * changed (0A000), its parameters' types no longer fit (42804, 42883, 42846, 42P08, 42P18), or the
 * statement is not on the server (26000).
 */
const MENDED_BY_A_NEW_PARSE = new Set<unknown>(['0A000', '42804', '42883', '42846', '42P08', '42P18', '26000']);

/** How node-postgres turns a JavaScript value into a parameter (dates, arrays, JSON), as for any query. */
export const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

const uses = new Map<string, number>();

function isHot(text: string): boolean {
  const count = (uses.get(text) ?? 0) + 1;
  if (count >= USES_BEFORE_PREPARING) return true;
  if (uses.size >= TEXTS_COUNTED) uses.clear();
  uses.set(text, count);
  return false;
}

/** Texts whose statements failed as statements, by how many times: names given in an earlier generation are not used again. */
const generations = new Map<string, number>();

function generationOf(text: string): number {
  return generations.get(text) ?? 0;
}

function newGeneration(text: string, stale: number): void {
  // Forgetting them all costs each connection one more Parse of those texts, and bounds the map.
  if (generations.size >= TEXTS_COUNTED) generations.clear();
  generations.set(text, stale + 1);
}

/** The client class for a pool: statement-caching unless switched off. */
export function poolClientClass(preparedStatements: boolean): typeof pg.Client {
  return preparedStatements ? StatementCachingClient : pg.Client;
}
