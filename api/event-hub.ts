import type { OpenDatabase } from '../db/database.js';

type Listener = () => void;

/**
 * One LISTEN per API process and event log (runs' on `run_events`, experiments' on `experiment_events`),
 * fanned out to the streams that follow each run or experiment by its id. A notification only says "look
 * again": streams read the log itself, so a missed one costs a poll interval, never an event.
 */
export class EventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly anyListeners = new Set<(id: string) => void>();
  private unlisten: (() => Promise<void>) | undefined;

  static async start(database: Pick<OpenDatabase, 'listen'>, channel: string): Promise<EventHub> {
    const hub = new EventHub();
    hub.unlisten = await database.listen(channel, (id) => hub.notify(id));
    return hub;
  }

  subscribe(id: string, listener: Listener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(id);
    };
  }

  /** Every notification, whatever its id: for a view over many runs (the console's inbox). */
  subscribeAll(listener: (id: string) => void): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  private notify(id: string): void {
    for (const listener of this.listeners.get(id) ?? []) listener();
    for (const listener of this.anyListeners) listener(id);
  }
}
