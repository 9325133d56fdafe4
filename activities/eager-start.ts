import type { Client } from '@temporalio/client';

/**
 * Eager workflow start: the server hands a new workflow's first task back in the reply to the start
 * itself, to a worker of this process, instead of queueing it for the next poll (docs/performance.md).
 *
 * Why a mark: the SDK allows it only on a client whose connection a worker polls on (a NativeConnection),
 * and refuses the start otherwise. The one-process platform starts runs with a client on its workers'
 * connection and marks it (AppDeps.runStarter); any other client starts workflows the ordinary way. When
 * the worker has no free workflow task slot the SDK does not ask, so asking never fails a start.
 */
const clientsBesideWorkers = new WeakSet<Client>();

/** Marks a client built on the connection of this process' workers; returns it. */
export function besideWorkers(client: Client): Client {
  clientsBesideWorkers.add(client);
  return client;
}

/** Whether workflows `client` starts may be handed to this process' workers in the start's reply. */
export function startsEagerly(client: Client): boolean {
  return clientsBesideWorkers.has(client);
}
