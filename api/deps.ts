import type { Client } from '@temporalio/client';
import type { Db } from '../db/database.js';

/** What handlers reach beyond the request: the database and the Temporal client. */
export interface AppDeps {
  db: Db;
  temporal: Client;
  publicUrl: string;
}
