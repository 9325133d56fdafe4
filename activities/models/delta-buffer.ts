/**
 * Collects streamed text deltas and hands them to `flush` in small batches, in order: a batch goes
 * out when `maxWaitMs` has passed since its first delta, so a fast stream costs a few database writes
 * rather than one per token, and a slow one is still seen promptly.
 */
export class DeltaBuffer {
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly flushBatch: (deltas: string[]) => Promise<void>,
    private readonly maxWaitMs = 30,
  ) {}

  push(delta: string): void {
    if (!delta) return;
    this.pending.push(delta);
    // A failed write surfaces from the next explicit flush(), which returns the same chain.
    this.timer ??= setTimeout(() => this.flush().catch(() => {}), this.maxWaitMs);
  }

  /** Sends what is pending and waits until every batch so far is written; rethrows a failed write. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length) this.chain = this.chain.then(() => this.flushBatch(batch));
    return this.chain;
  }
}
