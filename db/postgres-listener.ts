import pg from 'pg';
import { TCP_KEEPALIVE_DELAY_MS } from './config.js';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/**
 * A LISTEN on its own connection (it holds the connection for good, so not a pooled one) that outlives
 * the connection: when Postgres restarts, fails over or drops it, it reconnects with backoff and listens
 * again. Without this, one restart left the API deaf for good — streams then only noticed new events on
 * their poll interval. Notifications sent while it was away are lost, which costs the streams that poll
 * interval, never an event: a notification only says "look again".
 */
export class PostgresListener {
  private client: pg.Client | undefined;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onPayload: (payload: string) => void,
    private readonly onListening?: (listening: boolean) => void,
  ) {}

  /**
   * Listens once before answering, so a database that is unreachable at start fails the start.
   * `onListening(false)` when the connection is lost and `(true)` once it listens again: for a user that
   * must not rely on notifications it may have missed meanwhile (db/api-key-cache.ts).
   */
  static async start(
    url: string,
    channel: string,
    onPayload: (payload: string) => void,
    onListening?: (listening: boolean) => void,
  ): Promise<PostgresListener> {
    const listener = new PostgresListener(url, channel, onPayload, onListening);
    await listener.connect();
    return listener;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    // keepAlive: a half-open connection (the server gone without a reset) would otherwise go silent for good.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, keepAliveInitialDelayMillis: TCP_KEEPALIVE_DELAY_MS });
    // Installed before connecting: an 'error' without a listener would crash the process.
    client.on('error', (err) => this.lost(client, err.message));
    client.on('end', () => this.lost(client, 'connection ended'));
    client.on('notification', (message) => message.channel === this.channel && this.onPayload(message.payload ?? ''));
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    // Current only once it listens: a loss while connecting is the failed attempt's to retry.
    this.client = client;
    if (this.retryMs !== FIRST_RETRY_MS) {
      console.log(`[db] LISTEN ${this.channel}: listening again`);
      this.onListening?.(true);
    }
    this.retryMs = FIRST_RETRY_MS;
  }

  private lost(client: pg.Client, reason: string): void {
    // Only the current connection's loss counts ('error' and 'end' both fire for one loss).
    if (this.stopped || client !== this.client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    console.error(`[db] LISTEN ${this.channel} connection lost (${reason}); reconnecting`);
    this.onListening?.(false);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.connect().catch(() => this.scheduleReconnect());
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }
}
