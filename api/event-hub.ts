import type { OpenDatabase } from '../db/database.js';
import { RUN_EVENTS_CHANNEL } from '../db/run-events.js';

type Listener = () => void;

/**
 * One LISTEN per API process for every run's event appends, fanned out to the streams that follow each
 * run. A notification only says "look again": streams read the log itself, so a missed one costs a
 * poll interval, never an event.
 */
export class RunEventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private unlisten: (() => Promise<void>) | undefined;

  static async start(database: Pick<OpenDatabase, 'listen'>): Promise<RunEventHub> {
    const hub = new RunEventHub();
    hub.unlisten = await database.listen(RUN_EVENTS_CHANNEL, (runId) => hub.notify(runId));
    return hub;
  }

  subscribe(runId: string, listener: Listener): () => void {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(runId);
    };
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  private notify(runId: string): void {
    for (const listener of this.listeners.get(runId) ?? []) listener();
  }
}
