import { expect } from 'chai';
import { isoTimestamp, isoTimestampOrNull } from '../api/iso-timestamp.js';

/** api/iso-timestamp.ts: the API's timestamps, `toISOString()`'s text by arithmetic. */
describe('ISO timestamps', () => {
  it('writes what toISOString writes, across years 0000 to 9999 and their edges', () => {
    const edges = [
      0, -1, 1, 86_399_999, 86_400_000, -86_400_000,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(1900, 1, 28), Date.UTC(1900, 2, 1), Date.UTC(2100, 1, 28, 12),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999), Date.UTC(2025, 0, 1), Date.parse('0000-01-01T00:00:00.000Z'),
      Date.parse('0000-02-29T12:00:00.000Z'), Date.parse('0001-01-01T00:00:00.000Z'), Date.parse('9999-12-31T23:59:59.999Z'),
    ];
    const random = Array.from({ length: 200_000 }, () => Math.floor(-62_167_219_200_000 + Math.random() * (253_402_300_800_000 + 62_167_219_200_000)));
    const differing = [...edges, ...random].map((ms) => new Date(ms)).filter((date) => isoTimestamp(date) !== date.toISOString());
    expect(differing.map((date) => `${date.getTime()}: ${isoTimestamp(date)} ≠ ${date.toISOString()}`)).to.deep.equal([]);
  });

  it('leaves years outside 0000–9999 and invalid dates to toISOString', () => {
    for (const text of ['-000001-12-31T23:59:59.999Z', '+010000-01-01T00:00:00.000Z', '-271821-04-20T00:00:00.000Z']) {
      expect(isoTimestamp(new Date(text))).to.equal(text);
    }
    expect(() => isoTimestamp(new Date(NaN))).to.throw(RangeError);
    expect(isoTimestampOrNull(null)).to.equal(null);
    expect(isoTimestampOrNull(undefined)).to.equal(null);
    expect(isoTimestampOrNull(new Date(0))).to.equal('1970-01-01T00:00:00.000Z');
  });
});
