import { sql, type Kysely } from 'kysely';

/**
 * Every change to an API key row — a revocation, or its deletion with its workspace (on delete cascade) —
 * sends NOTIFY api_keys_changed with the key's id, at commit. The API processes cache key lookups
 * (db/api-key-cache.ts) and drop the key on hearing it. A trigger rather than a NOTIFY beside each
 * revocation in code, so that no way of ending a key (a cascade, an operator's SQL) can be missed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function notify_api_key_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('api_keys_changed', old.id);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger api_keys_changed after update or delete on api_keys
    for each row execute function notify_api_key_changed()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger api_keys_changed on api_keys`.execute(db);
  await sql`drop function notify_api_key_changed()`.execute(db);
}
