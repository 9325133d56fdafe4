import type { PGlite, Transaction } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

/**
 * A Kysely dialect over one embedded PGlite instance.
 *
 * PGlite has a single connection, so the driver hands it out to one borrower at a time: a transaction
 * keeps it from `begin` to `commit`, and every other query waits its turn. Without this queue two
 * concurrent requests would interleave their statements inside each other's transactions.
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}

  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

class PGliteDriver implements Driver {
  private queue: Promise<void> = Promise.resolve();
  private readonly connection: PGliteConnection;

  constructor(pglite: PGlite) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => (release = resolve));
    const previous = this.queue;
    this.queue = previous.then(() => turn);
    await previous;
    this.connection.release = release;
    return this.connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PGliteConnection).release();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.queue;
  }
}

class PGliteConnection implements DatabaseConnection {
  release: () => void = () => {};

  constructor(private readonly pglite: PGlite | Transaction) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters]);
    const affected = result.affectedRows === undefined ? undefined : BigInt(result.affectedRows);
    return { rows: result.rows, numAffectedRows: affected };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}
