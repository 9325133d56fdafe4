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
 * statements, which a named statement cannot be. Each connection names at most
 * `PREPARED_PER_CONNECTION` texts; the rest run unnamed as before. Names are never reused on a
 * connection, so nothing needs to be deallocated: a connection's statements end with it.
 *
 * The one error this adds: once a table's columns change (a migration while the process runs), a
 * prepared `select *` of it fails with "cached plan must not change result type". The connection then
 * forgets that name and prepares the text afresh; a statement that ran in a transaction of its own is
 * run again at once (nothing else was in its transaction), one inside a transaction fails it as any
 * error does, once per connection.
 *
 * Off with `DATABASE_PREPARED_STATEMENTS=off`: to measure what it gives, and a way back should a
 * generic plan ever serve some query worse than planning each call did.
 */
export class StatementCachingClient extends pg.Client {
  /** Statement name by text, on this connection. */
  private readonly names = new Map<string, string>();
  private namesGiven = 0;

  /** The name `text` runs under on this connection, or undefined to run it unnamed. */
  statementName(text: string, parameterCount: number): string | undefined {
    if (parameterCount === 0) return undefined;
    const known = this.names.get(text);
    if (known) return known;
    if (!isHot(text) || this.names.size >= PREPARED_PER_CONNECTION) return undefined;
    const name = `ap_${++this.namesGiven}`;
    this.names.set(text, name);
    return name;
  }

  /**
   * After `err` from `text`'s named statement: true when its cached plan is stale (see above), and the
   * connection has forgotten the name so that the text's next run prepares it anew.
   */
  forgetIfStale(err: unknown, text: string): boolean {
    const stale = err instanceof Error && (err as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(err.message);
    if (stale) this.names.delete(text);
    return stale;
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

  private async namedQuery(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
    const standalone = this.getTransactionStatus() === 'I';
    try {
      return await super.query({ name, text, values });
    } catch (err) {
      if (!this.forgetIfStale(err, text) || !standalone) throw err;
      return (await this.query(text, values)) as pg.QueryResult;
    }
  }
}

/** Runs of a text in this process before connections prepare it. */
export const USES_BEFORE_PREPARING = 3;
/** Named statements one connection keeps at most (pgjdbc's default cache holds 256). */
export const PREPARED_PER_CONNECTION = 256;
/** Texts counted at once: beyond this the counts start over, so texts that are never repeated cannot pile up. */
const TEXTS_COUNTED = 5_000;

const uses = new Map<string, number>();

function isHot(text: string): boolean {
  const count = (uses.get(text) ?? 0) + 1;
  if (count >= USES_BEFORE_PREPARING) return true;
  if (uses.size >= TEXTS_COUNTED) uses.clear();
  uses.set(text, count);
  return false;
}

/** The client class for a pool: statement-caching unless switched off. */
export function poolClientClass(preparedStatements: boolean): typeof pg.Client {
  return preparedStatements ? StatementCachingClient : pg.Client;
}
