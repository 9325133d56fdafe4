#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { upsertUser, UserInputError } from '../api/oauth/users.js';
import { insertApiKey } from '../db/api-keys.js';
import { databaseConfigFromEnv } from '../db/config.js';
import { openDatabase, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { withTenant } from '../db/tenant-transaction.js';
import { createTenant, findTenant } from '../db/tenants.js';

const USAGE = `usage:
  agent-platform tenant create NAME              create a workspace; prints {"tenant_id", "api_key"}
  agent-platform key create --tenant ID [--standard]   create a key (management unless --standard); prints {"tenant_id", "key_id", "kind", "api_key"}
  agent-platform user create --email E (--password-stdin | --password P) --tenant ID [--tenant ID ...]
                                                 create a user who can sign in to approve OAuth clients, member of
                                                 each workspace (again for an existing e-mail: adds the workspaces
                                                 and sets the password); prints {"user_id", "email", "tenant_ids", "created"}

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
    if (!(await findTenant(db, tenantId))) throw new UsageError(`no tenant with id ${tenantId}`);
    const kind = values.standard ? 'standard' : 'management';
    const { record, key } = await withTenant(db, tenantId, (tx) => insertApiKey(tx, tenantId, kind, 'cli'));
    return { tenant_id: tenantId, key_id: record.id, kind, api_key: key };
  },
  'user create': async (db, args) => {
    const { values } = parseArgs({
      args,
      options: { email: { type: 'string' }, password: { type: 'string' }, 'password-stdin': { type: 'boolean' }, tenant: { type: 'string', multiple: true } },
    });
    if (!values.email) throw new UsageError('user create needs --email E');
    if (!values.tenant?.length) throw new UsageError('user create needs --tenant ID');
    if ((values.password === undefined) === !values['password-stdin']) throw new UsageError('user create needs one of --password P and --password-stdin');
    const password = values.password ?? (await readStdin()).replace(/\r?\n$/, '');
    try {
      const user = await upsertUser(db, { email: values.email, password, tenantIds: values.tenant });
      return { user_id: user.userId, email: user.email, tenant_ids: values.tenant, created: user.created, password_changed: user.passwordChanged };
    } catch (err) {
      if (err instanceof UserInputError) throw new UsageError(err.message);
      throw err;
    }
  },
};

class UsageError extends Error {}

/** All of standard input: a password piped in stays out of the shell history and the process list. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

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
