import pg from 'pg';

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * A pool that hands out only connections outside any transaction.
 *
 * Every checkout assumes a fresh session: Kysely's transactions begin with `begin`, and the tenant
 * settings of `withTenant` and of a tenant statement are local to their transaction. A connection given
 * back inside a transaction (a bug somewhere; none is known) would make the next `begin` a warning
 * and those settings the old transaction's, outliving their caller; inside an aborted one every statement
 * fails. Such a connection is closed at checkout and the next one taken, for every user of the pool
 * (Kysely, tenant statements, tenant reads), instead of in each of them.
 */
export class IdleCheckoutPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    if (!callback) return this.connectIdle();
    // pg-pool's own `query` checks out with a callback.
    this.connectIdle().then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | undefined)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  private async connectIdle(): Promise<pg.PoolClient> {
    // Each stale connection closed makes room for a new one, which starts idle: bounded by the pool's size.
    for (let closed = 0; ; closed++) {
      const client = await super.connect();
      const status = client.getTransactionStatus();
      if (status === 'I') return client;
      const stale = new Error(`a pooled connection was handed back inside a transaction (status ${status}); it is closed`);
      console.error('[db]', stale.message);
      client.release(stale);
      if (closed >= (this.options.max ?? 10)) throw stale;
    }
  }
}
