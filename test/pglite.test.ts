import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { sql } from 'kysely';
import { cosineDistance, toSql } from 'pgvector/kysely';
import { openDatabase, type OpenDatabase } from '../db/database.js';

/**
 * Embedded PGlite through Kysely's own PGlite dialect: one connection shared by every caller, so what
 * the platform relies on is checked here directly, whichever database the rest of the suite runs on.
 */
describe('database: embedded PGlite', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  let database: OpenDatabase;

  async function openScratch(): Promise<OpenDatabase> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-platform-pglite-'));
    dirs.push(dir);
    return openDatabase({ kind: 'pglite', dataDir: dir });
  }

  before(async () => {
    database = await openScratch();
    await sql`create extension if not exists vector`.execute(database.db);
  });

  after(async () => {
    await database?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs concurrent transactions one after another on its single connection', async () => {
    const { db } = database;
    await sql`create table numbered (n int primary key)`.execute(db);
    // Read the highest number, yield to the other transactions, then insert the next one: interleaved
    // statements would read the same maximum twice.
    const numbers = await Promise.all(
      Array.from({ length: 6 }, () =>
        db.transaction().execute(async (tx) => {
          const { rows } = await sql<{ n: number }>`select coalesce(max(n), 0) as n from numbered`.execute(tx);
          await sleep(5);
          const next = rows[0]!.n + 1;
          await sql`insert into numbered values (${next})`.execute(tx);
          return next;
        }),
      ),
    );
    expect([...numbers].sort()).to.deep.equal([1, 2, 3, 4, 5, 6]);
  });

  it('counts the rows an update or a delete touched', async () => {
    const db = database.db.withTables<{ counted: { id: number; seen: boolean } }>();
    await sql`create table counted (id int primary key, seen boolean not null)`.execute(db);
    await db.insertInto('counted').values([1, 2, 3].map((id) => ({ id, seen: false }))).execute();
    const updated = await db.updateTable('counted').set({ seen: true }).where('id', '<', 3).executeTakeFirst();
    expect(updated.numUpdatedRows).to.equal(2n);
    const deleted = await db.deleteFrom('counted').where('seen', '=', true).executeTakeFirst();
    expect(deleted.numDeletedRows).to.equal(2n);
  });

  it('delivers a NOTIFY sent inside a transaction to listen() once it commits', async () => {
    const payloads: string[] = [];
    const unlisten = await database.listen('pglite_test', (payload) => payloads.push(payload));
    try {
      await database.db.transaction().execute(async (tx) => {
        await sql`select pg_notify('pglite_test', 'run_1')`.execute(tx);
        await sleep(20);
        expect(payloads).to.deep.equal([]);
      });
      for (let i = 0; i < 50 && payloads.length === 0; i++) await sleep(10);
      expect(payloads).to.deep.equal(['run_1']);
    } finally {
      await unlisten();
    }
  });

  it("stores an embedding's float4 components exactly through pgvector's toSql, and finds it at distance 0", async () => {
    const db = database.db.withTables<{ embedded: { id: number; embedding: string } }>();
    await sql`create table embedded (id int primary key, embedding vector(384) not null)`.execute(db);
    const vector = new Float32Array(384).map((_, i) => Math.sin(i * 12.9898) * 0.3);
    // toSql takes plain arrays only: the embedder's Float32Array goes through Array.from.
    expect(() => toSql(vector as unknown as number[])).to.throw();
    await db.insertInto('embedded').values({ id: 1, embedding: toSql(Array.from(vector))! }).execute();

    const stored = await db.selectFrom('embedded').select(sql<string>`embedding::text`.as('text')).executeTakeFirstOrThrow();
    const components = stored.text.slice(1, -1).split(',').map(Number);
    expect(components).to.have.length(384);
    components.forEach((c, i) => expect(Math.fround(c), `component ${i}`).to.equal(vector[i]));

    const distance = cosineDistance('embedding', Array.from(vector)).$castTo<number>();
    const nearest = await db.selectFrom('embedded').select(distance.as('distance')).orderBy(distance).executeTakeFirstOrThrow();
    expect(Number(nearest.distance)).to.be.closeTo(0, 1e-6);
  });

  it('refuses vectors pgvector cannot store', async () => {
    const db = database.db.withTables<{ small: { embedding: string } }>();
    await sql`create table small (embedding vector(2) not null)`.execute(db);
    for (const bad of [[1, Number.NaN], [Infinity, 0], [1e39, 0], []]) {
      const error = await db
        .insertInto('small')
        .values({ embedding: toSql(bad)! })
        .execute()
        .then(() => undefined, (err: unknown) => err);
      expect(error, JSON.stringify(bad)).to.be.instanceOf(Error);
    }
  });

  // Closing PGlite under an open transaction would not fail cleanly: its next statement spins in WASM.
  it('closes only once the transaction holding the connection has finished', async () => {
    const own = await openScratch();
    await sql`create table finished (n int)`.execute(own.db);
    const transaction = own.db.transaction().execute(async (tx) => {
      await sleep(50);
      await sql`insert into finished values (1)`.execute(tx);
      return 'committed';
    });
    await sleep(5);
    await own.close();
    expect(await transaction).to.equal('committed');
  });
});
