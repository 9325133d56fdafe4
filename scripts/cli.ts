#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { insertApiKey } from '../db/api-keys.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { withTenant } from '../db/tenant.js';
import { createTenant } from '../db/tenants.js';

const USAGE = `usage:
  agent-platform tenant create NAME              create a workspace; prints {"tenant_id", "api_key"}
  agent-platform key create --tenant ID [--standard]   create a key (management unless --standard); prints {"tenant_id", "key_id", "kind", "api_key"}

Uses the same database settings as the server (DATABASE_URL, else PGlite under DATA_DIR).`;

type Command = (db: Db, args: string[]) => Promise<unknown>;

const commands: Record<string, Command> = {
  'tenant create': async (db, args) => {
    const name = args[0];
    if (!name) throw new UsageError('tenant create needs a NAME');
    const { tenant, apiKey } = await createTenant(db, name);
    return { tenant_id: tenant.id, api_key: apiKey };
  },
  'key create': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, standard: { type: 'boolean' } } });
    if (!values.tenant) throw new UsageError('key create needs --tenant ID');
    const tenantId = values.tenant;
    const tenant = await db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
    if (!tenant) throw new UsageError(`no tenant with id ${tenantId}`);
    const kind = values.standard ? 'standard' : 'management';
    const { record, key } = await withTenant(db, tenantId, (tx) => insertApiKey(tx, tenantId, kind, 'cli'));
    return { tenant_id: tenantId, key_id: record.id, kind, api_key: key };
  },
};

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const command = commands[argv.slice(0, 2).join(' ')];
  if (!command) {
    console.error(USAGE);
    return 2;
  }
  const database = await openDatabase(databaseConfigFromEnv());
  try {
    await migrateToLatest(database.db);
    console.log(JSON.stringify(await command(database.db, argv.slice(2))));
    return 0;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${USAGE}`);
    return 2;
  } finally {
    await database.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
