import { performance } from 'node:perf_hooks';

/** How long a finished computation stays reusable: about a snapshot stream's gathering of a burst. */
const KEEP_MS = 2000;

/**
 * The part of a console snapshot that is the same for every viewer (an experiment's report, the
 * questions waiting in a set of workspaces), computed once per key for all the streams that woke
 * together, instead of once per viewer. A stream passes the moment it woke (`since`): it reuses a
 * computation that started at or after it — one that has seen everything the wake-up announced —
 * and starts its own otherwise. What is per viewer (the session and membership checks, what it was
 * sent before, its CSRF token) stays with each stream. Keys hold the tenant, so nothing crosses
 * workspaces.
 */
export class SharedSnapshots<T> {
  private readonly latest = new Map<string, { startedAt: number; result: Promise<T> }>();

  get(key: string, since: number, compute: () => Promise<T>): Promise<T> {
    const current = this.latest.get(key);
    if (current && current.startedAt >= since) return current.result;
    const entry = { startedAt: performance.now(), result: compute() };
    this.latest.set(key, entry);
    const forget = () => {
      setTimeout(() => this.latest.get(key) === entry && this.latest.delete(key), KEEP_MS).unref();
    };
    // A failure is not reused: forgotten at once, each stream retries on its own terms.
    entry.result.then(forget, () => this.latest.get(key) === entry && this.latest.delete(key));
    return entry.result;
  }
}
