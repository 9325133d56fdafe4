import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { readIsoTimestamptz } from '../db/timestamptz.js';
import { testPlatform } from './support/global.js';

/** db/timestamptz.ts: Postgres' timestamptz text read digit by digit, registered as node-postgres' parser. */
describe('timestamptz parsing', () => {
  /** The parser db/database.ts registered: the fast path, else node-postgres' own. */
  const registered = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date | number;

  /** Postgres' own text of each timestamp in `timeZone`, and its epoch milliseconds (truncated as JS dates are). */
  async function fromPostgres(timeZone: string, count: number) {
    return testPlatform()
      .db.connection()
      .execute(async (connection) => {
        await sql`select set_config('timezone', ${timeZone}, false)`.execute(connection);
        try {
          const { rows } = await sql<{ text: string; ms: string }>`
            select t::text as text, floor(extract(epoch from t) * 1000)::text as ms
            from (select timestamptz '1000-01-01 00:00:00+00' + random() * interval '9000 years' as t from generate_series(1, ${count})
                  union all select date_trunc('second', now()) union all select date_trunc('minute', now())
                  union all select timestamptz '2026-11-28 10:29:59.5+00' union all select timestamptz '2026-11-28 10:29:59.289+00'
                  union all select timestamptz '9999-12-31 23:59:59.999999+00' union all select timestamptz '1000-01-01 00:00:00+14') as s`.execute(connection);
          return rows;
        } finally {
          await sql`reset timezone`.execute(connection);
        }
      });
  }

  for (const timeZone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham', 'Europe/Amsterdam', 'America/Los_Angeles']) {
    it(`reads what Postgres sends in ${timeZone} as the instant Postgres means`, async () => {
      const rows = await fromPostgres(timeZone, 500);
      for (const { text, ms } of rows) {
        expect((registered(text) as Date).getTime(), text).to.equal(Number(ms));
      }
    });
  }

  it('takes the usual form itself and leaves every other to node-postgres', async () => {
    expect(readIsoTimestamptz('2026-11-28 10:29:59.123456+00')?.toISOString()).to.equal('2026-11-28T10:29:59.123Z');
    expect(readIsoTimestamptz('2026-11-28 10:29:59+05:30')?.toISOString()).to.equal('2026-11-28T04:59:59.000Z');
    expect(readIsoTimestamptz('2026-11-28 10:29:59.5-03:30')?.toISOString()).to.equal('2026-11-28T13:59:59.500Z');
    for (const other of [
      'infinity',
      '-infinity',
      '0044-03-15 12:00:00+00 BC',
      '0999-12-31 23:59:59+00',
      '12026-11-28 10:29:59+00',
      '1900-01-01 00:00:00+00:19:32',
      '2026-11-28T10:29:59Z',
      '2026-11-28 10:29:59.+00',
      '2026-11-28 10:29:5x+00',
      '2026-11-28 10:29:59+0',
    ]) {
      expect(readIsoTimestamptz(other), other).to.equal(undefined);
    }
    // node-postgres reads those as it always did.
    expect(registered('infinity')).to.equal(Infinity);
    expect((registered('0999-12-31 23:59:59+00') as Date).toISOString()).to.equal('0999-12-31T23:59:59.000Z');
    expect((registered('1900-01-01 00:00:00+00:19:32') as Date).toISOString()).to.equal('1899-12-31T23:40:28.000Z');
  });
});
