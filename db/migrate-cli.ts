import { databaseConfigFromEnv } from './config.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

/** `npm run migrate`: applies pending migrations to the configured database. */
const database = await openDatabase(databaseConfigFromEnv());
try {
  const applied = await migrateToLatest(database.db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
} finally {
  await database.close();
}
