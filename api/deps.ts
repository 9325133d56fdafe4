import { Client, Connection } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { besideWorkers } from '../activities/eager-start.js';
import type { OpenDatabase, Db } from '../db/database.js';
import { sharedEmbedder, type Embedder } from '../activities/embedding/index.js';
import { EventHub } from './event-hub.js';
import { secretKeyringFromEnv } from '../activities/secrets/secrets-key.js';
import { FinishedCellsCache } from './finished-cells-cache.js';
import { ApiKeyCache } from '../db/api-key-cache.js';
import { RUN_EVENTS_CHANNEL } from '../db/run-events.js';
import { EXPERIMENT_EVENTS_CHANNEL } from '../db/experiment-events.js';

/** What handlers reach beyond the request. */
export interface AppDeps {
  db: Db;
  /** On a connection of the API's own (grpc-js), also where this process has workers (`runStarter`). */
  temporal: Client;
  /**
   * What runs are started with: where this process has workers, a client on their connection, so that a
   * run's first workflow task comes back with the start (activities/eager-start.ts); else `temporal`.
   * Only starts: on that connection the SDK no longer recognises some refusals by their text (a schedule's
   * invalid spec), and a deadline bounds each retry rather than the call.
   */
  runStarter: Client;
  /** Wakes run event streams when events are appended. */
  events: EventHub;
  /** Wakes experiment event streams the same way. */
  experimentEvents: EventHub;
  /** Finished experiments' cells, for the reads of their leaderboards and matrices. */
  finishedCells: FinishedCellsCache;
  /** The embedder for memory and knowledge (started on first use). */
  embedder: () => Embedder;
  publicUrl: string;
}

export interface OpenAppDeps {
  deps: AppDeps;
  /** Stops the event hub and closes the API's Temporal connection (not the database, the workers' connection or the shared embedder). */
  close(): Promise<void>;
}

/**
 * The API's dependencies over an open database: a Temporal client and the run event hub.
 * The API process (api/server.ts) and the one-process platform of `npm start` and the tests both make them here.
 */
export async function createAppDeps(options: {
  database: OpenDatabase;
  temporalAddress: string;
  temporalNamespace: string;
  publicUrl: string;
  /** The connection this process' workers poll on, when it has workers: `runStarter` is built on it. */
  workersConnection?: NativeConnection;
}): Promise<OpenAppDeps> {
  // A malformed SECRETS_KEY fails the start, not the first provider saved; a missing one is said at once.
  if (!secretKeyringFromEnv()) {
    console.warn('[api] SECRETS_KEY is not set: provider connections cannot store an api_key or headers (saving one answers 503); see docs/providers.md');
  }
  const connection = await Connection.connect({ address: options.temporalAddress });
  const temporal = new Client({ connection, namespace: options.temporalNamespace });
  const runStarter = options.workersConnection
    ? besideWorkers(new Client({ connection: options.workersConnection, namespace: options.temporalNamespace }))
    : temporal;
  let events: EventHub | undefined;
  let experimentEvents: EventHub;
  // Serves authenticate()'s key lookups for this database (db/api-key-cache.ts); found by the Db handle.
  let apiKeys: ApiKeyCache | undefined;
  try {
    apiKeys = await ApiKeyCache.start(options.database);
    events = await EventHub.start(options.database, RUN_EVENTS_CHANNEL);
    experimentEvents = await EventHub.start(options.database, EXPERIMENT_EVENTS_CHANNEL);
  } catch (err) {
    await events?.close();
    await apiKeys?.close();
    await connection.close();
    throw err;
  }
  return {
    deps: { db: options.database.db, temporal, runStarter, events, experimentEvents, finishedCells: new FinishedCellsCache(), embedder: sharedEmbedder, publicUrl: options.publicUrl },
    async close() {
      await events!.close();
      await experimentEvents.close();
      await apiKeys!.close();
      await connection.close();
    },
  };
}
