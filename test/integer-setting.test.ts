import { expect } from 'chai';
import { integerSetting } from '../db/integer-setting.js';

describe('integer settings from the environment', () => {
  it('takes the fallback when unset or empty, and an integer of at least the minimum', () => {
    expect(integerSetting({}, 'RUN_HISTORY_ARCHIVER_CHECK_MS', 60_000, 100)).to.equal(60_000);
    expect(integerSetting({ RUN_HISTORY_ARCHIVER_CHECK_MS: '' }, 'RUN_HISTORY_ARCHIVER_CHECK_MS', 60_000, 100)).to.equal(60_000);
    expect(integerSetting({ RUN_HISTORY_ARCHIVER_CHECK_MS: '100' }, 'RUN_HISTORY_ARCHIVER_CHECK_MS', 60_000, 100)).to.equal(100);
  });

  it('refuses anything else, naming the setting and the rule', () => {
    for (const bad of ['99', 'soon', '1e9.5', '150.5']) {
      expect(() => integerSetting({ RUN_HISTORY_ARCHIVER_CHECK_MS: bad }, 'RUN_HISTORY_ARCHIVER_CHECK_MS', 60_000, 100)).to.throw(
        `RUN_HISTORY_ARCHIVER_CHECK_MS must be an integer of at least 100, not '${bad}'`,
      );
    }
    expect(() => integerSetting({ WORKER_MAX_CONCURRENT_ACTIVITIES: '0' }, 'WORKER_MAX_CONCURRENT_ACTIVITIES', 100, 1)).to.throw(
      "WORKER_MAX_CONCURRENT_ACTIVITIES must be a positive integer, not '0'",
    );
  });
});
