import { expect } from 'chai';
import { appendRunEvents, appendRunEventsNow, readRunEvents, RUN_EVENTS_CHANNEL, type NewRunEvent } from '../db/run-events.js';
import { withTenant } from '../db/tenant-transaction.js';
import { publishAgent, scriptedGraph } from './support/agents.js';
import { newTenant, type TestTenant } from './support/api.js';
import { failure } from './support/failure.js';
import { testPlatform } from './support/global.js';
import { recordQueuedRun } from './support/recorded-run.js';
import { until } from './support/until.js';

/**
 * The event logs' append (db/event-log.ts), one statement per call: numbering without gaps, the dedupe
 * keys that make an activity's retry harmless, the NOTIFY at commit, and what it refuses. Runs are
 * queued through the repository and never started, so each test decides what the log holds (seq 1 is
 * the run's `run.created`). On PGlite (one connection) concurrent appenders take turns; only Postgres
 * makes them wait on the run's row.
 */
describe('event logs: appending', () => {
  let tenant: TestTenant;
  let agentId: string;

  before(async () => {
    tenant = await newTenant('event-log');
    agentId = await publishAgent(tenant.key, 'event-log', scriptedGraph([{ text: 'never run' }]));
  });

  const queuedRun = () => recordQueuedRun(testPlatform().db, { tenantId: tenant.tenantId, agentId, input: 'x', source: 'api' });

  const append = (runId: string, events: NewRunEvent[], t = tenant) => appendRunEventsNow(testPlatform().db, t.tenantId, runId, events);
  const delta = (text: string, dedupeKey?: string): NewRunEvent => ({ type: 'message.delta', data: { delta: text }, ...(dedupeKey && { dedupeKey }) });
  const logOf = async (runId: string) =>
    (await readRunEvents(testPlatform().db, tenant.tenantId, runId, 0)).map((e) => ({ seq: e.seq, type: e.type, data: e.data as Record<string, unknown>, key: e.dedupe_key }));
  const counterOf = async (runId: string) =>
    (await testPlatform().db.selectFrom('runs').select('last_event_seq').where('id', '=', runId).executeTakeFirstOrThrow()).last_event_seq;

  it('numbers a batch in its order after what the log holds, and stores each event as given', async () => {
    const runId = await queuedRun();
    const data = { text: 'ünïcode "quoted" \\ and \n newline', nested: { list: [1, 2.5, null, true], empty: {} } };
    expect(await append(runId, [delta('a'), { type: 'message.completed', data, dedupeKey: 'turn-0' }, delta('b')])).to.deep.equal([2, 3, 4]);
    expect(await append(runId, [delta('c')])).to.deep.equal([5]);
    const log = await logOf(runId);
    expect(log[0]).to.include({ seq: 1, type: 'run.created' });
    expect(log.slice(1)).to.deep.equal([
      { seq: 2, type: 'message.delta', data: { delta: 'a' }, key: null },
      { seq: 3, type: 'message.completed', data, key: 'turn-0' },
      { seq: 4, type: 'message.delta', data: { delta: 'b' }, key: null },
      { seq: 5, type: 'message.delta', data: { delta: 'c' }, key: null },
    ]);
    expect(await counterOf(runId)).to.equal(5);
    expect(await append(runId, [])).to.deep.equal([]);
    expect(await counterOf(runId)).to.equal(5);
  });

  it('skips the keyed events already in the log, so a retried write appends nothing twice', async () => {
    const runId = await queuedRun();
    const batch = [delta('one', 'k1'), delta('two', 'k2')];
    expect(await append(runId, batch)).to.deep.equal([2, 3]);
    // A retry of the same write: nothing new, the counter untouched.
    expect(await append(runId, batch)).to.deep.equal([]);
    expect(await counterOf(runId)).to.equal(3);
    // Old keys among new events: only the new ones, numbered on without a gap, in the batch's order.
    expect(await append(runId, [delta('again', 'k1'), delta('unkeyed'), delta('three', 'k3'), delta('again', 'k2')])).to.deep.equal([4, 5]);
    const log = await logOf(runId);
    expect(log.map((e) => e.seq)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(log.slice(1).map((e) => [e.data.delta, e.key])).to.deep.equal([
      ['one', 'k1'],
      ['two', 'k2'],
      ['unkeyed', null],
      ['three', 'k3'],
    ]);
    // A key twice in one batch: the first occurrence is appended, the second skipped.
    expect(await append(runId, [delta('first', 'twice'), delta('second', 'twice')])).to.deep.equal([6]);
    expect((await logOf(runId)).at(-1)).to.include({ seq: 6, key: 'twice' }).and.nested.include({ 'data.delta': 'first' });
    // Within one transaction, a later write sees the earlier one's keys.
    const inOneTransaction = await withTenant(testPlatform().db, tenant.tenantId, async (tx) => [
      await appendRunEvents(tx, tenant.tenantId, runId, [delta('four', 'k4')]),
      await appendRunEvents(tx, tenant.tenantId, runId, [delta('four again', 'k4'), delta('five')]),
    ]);
    expect(inOneTransaction).to.deep.equal([[7], [8]]);
    // Keys are per run: another run's log takes the same key.
    expect(await append(await queuedRun(), [delta('one', 'k1')])).to.deep.equal([2]);
  });

  it('gives concurrent appenders to one run distinct numbers without gaps, each batch in one piece', async () => {
    const runId = await queuedRun();
    const batches = await Promise.all(Array.from({ length: 20 }, (_, i) => append(runId, [delta(`${i}a`), delta(`${i}b`, `key-${i}`)])));
    for (const seqs of batches) expect(seqs[1]).to.equal(seqs[0]! + 1);
    expect(batches.flat().sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 2));
    expect(await counterOf(runId)).to.equal(41);
  });

  it('notifies listeners at commit for a write that appended, not for one that only skipped or rolled back', async () => {
    const runId = await queuedRun();
    const marker = await queuedRun();
    const heard: string[] = [];
    // Other tests' runs share the channel: only these two runs' notifications are counted.
    const unlisten = await testPlatform().listen(RUN_EVENTS_CHANNEL, (id) => [runId, marker].includes(id) && heard.push(id));
    try {
      await append(runId, [delta('x', 'once'), delta('y')]);
      await until(() => heard.includes(runId));
      expect(heard.filter((id) => id === runId)).to.have.length(1);

      heard.length = 0;
      await append(runId, [delta('x', 'once')]); // skipped
      const rolledBack = withTenant(testPlatform().db, tenant.tenantId, async (tx) => {
        await appendRunEvents(tx, tenant.tenantId, runId, [delta('z')]);
        throw new Error('roll back');
      });
      expect((await failure(rolledBack)).message).to.equal('roll back');
      // Notifications arrive in commit order: once the marker's is heard, any earlier one would have been.
      await append(marker, [delta('m')]);
      await until(() => heard.includes(marker));
      expect(heard).to.deep.equal([marker]);
      expect((await logOf(runId)).map((e) => e.seq)).to.deep.equal([1, 2, 3]);
    } finally {
      await unlisten();
    }
  });

  it("refuses a write to a run it cannot see (none, or another workspace's) and writes nothing", async () => {
    const runId = await queuedRun();
    expect((await failure(append('run_doesnotexist', [delta('x')]))).message).to.match(/no runs row run_doesnotexist/);
    const other = await newTenant('event-log-other');
    expect((await failure(append(runId, [delta('intruder', 'k')], other))).message).to.match(/no runs row run_/);
    expect(await logOf(runId)).to.have.length(1);
    expect(await counterOf(runId)).to.equal(1);
  });
});
