import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import type { IdleCheckoutPool } from './idle-checkout-pool.js';
import type { Db } from './database.js';
import { queryCompiler } from './query-compiler.js';
import { prepareValue, StatementCachingClient } from './statement-cache.js';
import { TENANT_ROLE, withTenant, type TenantScoped } from './tenant-transaction.js';

/**
 * One statement as one tenant, in one round trip.
 *
 * Why: `withTenant` costs a statement that stands alone three round trips (`begin` carrying the
 * settings, the statement, `commit`). A run made six such transactions (three event appends, two reads
 * of its log by the model turns, the webhook lookup at its end), and under the runs benchmark the
 * process's main thread spent ~29 % of its time in socket writes, one per round trip
 * (docs/performance.md).
 *
 * How: Postgres' extended protocol runs everything between two Sync messages as one implicit
 * transaction. The tenant settings (`set_config(…, true)`: local to that transaction, the tenant a
 * bound parameter) and the statement go as Parse/Bind/Execute messages and then one Sync, in one write,
 * and the replies come back together. The transaction commits at the Sync, or rolls back when either
 * fails; the settings end with it, so the pooled connection goes back as it came. It runs on the same
 * pool as Kysely's transactions and opens no connection of its own.
 *
 * The statement is built on a compiler that never connects (`build` gets it, so the repositories'
 * tenant-scoped builders serve both ways). PGlite has one connection and no round trips: there it is
 * `withTenant`'s transaction.
 */
export function tenantStatement<Row>(db: Db, tenantId: string, build: (scope: TenantScoped) => CompiledQuery<Row>): Promise<Row[]> {
  return tenantStatements(db, tenantId, (scope) => [build(scope)]);
}

/**
 * Statements run in order as one tenant in one transaction, in one round trip as above; answers the last
 * one's rows. Each statement takes its snapshot when it starts (read committed), after the ones before it
 * have run: a lock taken by one holds for the next. For work whose statements do not depend on each
 * other's answers; work that decides between statements takes `withTenant`. No statement may be
 * transaction control (`begin`, `commit`): it would end the implicit transaction, and the settings with it.
 */
export async function tenantStatements<Row>(
  db: Db,
  tenantId: string,
  build: (scope: TenantScoped) => readonly [...CompiledQuery<unknown>[], CompiledQuery<Row>],
): Promise<Row[]> {
  const pool = statementPools.get(db);
  if (!pool) {
    return withTenant(db, tenantId, async (tx) => {
      let rows: unknown[] = [];
      for (const statement of build(tx)) rows = (await tx.executeQuery(statement)).rows;
      return rows as Row[];
    });
  }
  const statements = build(queryCompiler);
  const ahead = statements.slice(0, -1);
  const last = statements.at(-1)!;
  // Built before a connection is taken: a parameter that cannot be converted throws here, with nothing sent.
  let pending = pendingQuery(tenantId, ahead, last);
  // The settings are local to the implicit transaction the Sync ends: the pool hands out only
  // connections outside any transaction (db/idle-checkout-pool.ts).
  const client = await pool.connect();
  // The last statement runs prepared on connections that cache statements (db/statement-cache.ts); those ahead, unnamed.
  const caching = client instanceof StatementCachingClient ? client : undefined;
  let dropped: unknown;
  try {
    pending.query.name = caching?.statementName(last.sql, last.parameters.length);
    try {
      return (await send(client, pending)) as Row[];
    } catch (err) {
      // Its prepared statement no longer fits (db/statement-cache.ts): nothing of the implicit transaction stands, so it runs once more, prepared anew.
      if (!pending.query.name || !caching?.renameAfter(err, last.sql)) throw err;
      pending = pendingQuery(tenantId, ahead, last);
      pending.query.name = caching.statementName(last.sql, last.parameters.length);
      return (await send(client, pending)) as Row[];
    }
  } catch (err) {
    // Thrown while its messages were being written: the connection's state is unknown, so the pool drops it.
    if (err instanceof UnsentQueryError) dropped = err.cause;
    throw dropped ?? err;
  } finally {
    client.release(dropped as Error | undefined);
  }
}

/** A query not yet sent, and its rows once answered. */
interface PendingQuery {
  query: TenantStatementQuery;
  answered: Promise<unknown[]>;
}

function pendingQuery(tenantId: string, ahead: readonly CompiledQuery<unknown>[], last: CompiledQuery<unknown>): PendingQuery {
  let settle!: QueryCallback;
  const answered = new Promise<unknown[]>((resolve, reject) => {
    settle = (err, result) => (err ? reject(err) : resolve(result.rows));
  });
  return { query: new TenantStatementQuery(tenantId, ahead, last, settle), answered };
}

function send(client: pg.PoolClient, pending: PendingQuery): Promise<unknown[]> {
  try {
    client.query(pending.query);
  } catch (err) {
    throw new UnsentQueryError('a tenant statement could not be written', { cause: err });
  }
  return pending.answered;
}

/** A query whose writing threw: the connection may hold part of its messages. */
class UnsentQueryError extends Error {}

/** The pool of each open Postgres database, for its tenant statements (db/database.ts attaches it). */
const statementPools = new WeakMap<Db, IdleCheckoutPool>();

/** Lets `tenantStatement` and `tenantStatements` run on `db`'s pool in one round trip. */
export function attachTenantStatements(db: Db, pool: IdleCheckoutPool): void {
  statementPools.set(db, pool);
}

/** The settings `withTenant` makes, in the statement's implicit transaction. */
const SETTINGS_SQL = `select set_config('role', '${TENANT_ROLE}', true), set_config('app.tenant_id', $1, true)`;

/** The members of node-postgres' Query that this file overrides: its protocol handling, used by pg-cursor too, not in its types. */
interface QueryProtocol {
  name: string | undefined;
  text: string;
  hasBeenParsed(connection: ProtocolConnection): boolean;
  prepare(connection: ProtocolConnection): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void;
  handleEmptyQuery(connection: ProtocolConnection): void;
}

/** The messages of node-postgres' connection that the statements sent ahead need. */
interface ProtocolConnection {
  parse(message: { text: string; name?: string }): void;
  /** Named statements whose Parse is on its way, by name: node-postgres' record, which its own queries keep too. */
  submittedNamedStatements: Record<string, string>;
  bind(message: { values: unknown[] }): void;
  execute(message: { portal: string }): void;
}


type QueryCallback = (err: Error | undefined, result: pg.QueryResult) => void;
const ExtendedQuery = pg.Query as unknown as new (config: pg.QueryConfig & { queryMode: 'extended' }, callback: QueryCallback) => pg.Query & QueryProtocol;

/**
 * The last statement, with the tenant settings and the statements before it sent ahead of it, before
 * the one Sync that node-postgres sends after a statement's Execute (the messages go out in one write:
 * Query corks the socket around `prepare`). What those earlier statements answer is not passed on; an
 * error in any statement is the query's error, as for any query, and Postgres skips the rest.
 */
class TenantStatementQuery extends ExtendedQuery {
  /** Statements sent ahead whose completion has not come back yet: the settings and `ahead`. */
  private pendingAhead: number;
  private readonly aheadValues: unknown[][];

  constructor(
    private readonly tenantId: string,
    private readonly ahead: readonly CompiledQuery<unknown>[],
    last: CompiledQuery<unknown>,
    callback: QueryCallback,
  ) {
    super({ text: last.sql, values: last.parameters.map((value) => prepareValue(value)), queryMode: 'extended' }, callback);
    this.pendingAhead = 1 + ahead.length;
    // Converted now, as node-postgres converts any query's parameters, so that nothing can throw between
    // the first message written and the Sync: a Sync sent after a failed Bind would commit what ran ahead.
    this.aheadValues = ahead.map((statement) => statement.parameters.map((value) => prepareValue(value)));
  }

  override prepare(connection: ProtocolConnection): void {
    // A named statement new to the connection is parsed before anything else: its ParseComplete is then the
    // first reply, and node-postgres, which records the query's name at every ParseComplete, records it only
    // once that parse has succeeded (a failure skips everything after it, the other parses too).
    if (this.name && !this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text, name: this.name });
      connection.submittedNamedStatements[this.name] = this.text;
    }
    sendAhead(connection, SETTINGS_SQL, [this.tenantId]);
    this.ahead.forEach((statement, i) => sendAhead(connection, statement.sql, this.aheadValues[i]!));
    super.prepare(connection);
  }

  override handleDataRow(message: unknown): void {
    if (this.pendingAhead === 0) super.handleDataRow(message);
  }

  override handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    if (this.pendingAhead === 0) return super.handleCommandComplete(message, connection);
    this.pendingAhead--;
  }

  /** An empty statement ahead completes this way instead. */
  override handleEmptyQuery(connection: ProtocolConnection): void {
    if (this.pendingAhead === 0) return super.handleEmptyQuery(connection);
    this.pendingAhead--;
  }
}

/** A statement whose rows are not read (no Describe), its parameters converted already. */
function sendAhead(connection: ProtocolConnection, text: string, values: unknown[]): void {
  connection.parse({ text });
  connection.bind({ values });
  connection.execute({ portal: '' });
}
