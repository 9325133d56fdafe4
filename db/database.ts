import fs from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from './config.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

/** An open database: the Kysely handle, what it runs on, and how to close it. */
export interface OpenDatabase {
  db: Db;
  kind: DatabaseConfig['kind'];
  close(): Promise<void>;
}

// Postgres `bigint` (count(*) and friends) as a JS number: our counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolSize });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  // PGlite creates its own folder but not the parents; the vector extension must be named on every open.
  await fs.mkdir(config.dataDir, { recursive: true });
  const pglite = await PGlite.create({ dataDir: config.dataDir, extensions: { vector } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

/** True when the database answers a trivial query. */
export async function isDatabaseReachable(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
