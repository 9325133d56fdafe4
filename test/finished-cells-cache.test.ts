import { expect } from 'chai';
import { FinishedCellsCache, type FinishedCells } from '../api/finished-cells-cache.js';

function cells(matrix: string): FinishedCells {
  return { outcomes: [], matrix: Buffer.from(matrix) };
}

describe('finished cells cache', () => {
  it('keeps entries up to its size, dropping the least recently used first', () => {
    // Each entry below weighs 10 bytes of matrix and no outcomes.
    const cache = new FinishedCellsCache(25);
    cache.set('exp_a', cells('a'.repeat(10)), '');
    cache.set('exp_b', cells('b'.repeat(10)), '');
    expect(cache.get('exp_a')?.matrix.toString()).to.equal('a'.repeat(10)); // now the most recently used
    cache.set('exp_c', cells('c'.repeat(10)), '');
    expect(cache.get('exp_b')).to.equal(undefined);
    expect(cache.get('exp_a')?.matrix.toString()).to.equal('a'.repeat(10));
    expect(cache.get('exp_c')?.matrix.toString()).to.equal('c'.repeat(10));
  });

  it('counts the outcomes text too, refuses what is bigger than itself, and forgets deleted experiments', () => {
    const cache = new FinishedCellsCache(50);
    cache.set('exp_big', cells('x'), 'y'.repeat(25)); // 1 + 2 * 25 bytes
    expect(cache.get('exp_big')).to.equal(undefined);
    cache.set('exp_a', cells('a'), 'o'.repeat(11));
    cache.set('exp_a', cells('A'), 'o'.repeat(11)); // replaced, not counted twice
    cache.set('exp_b', cells('b'), 'o'.repeat(11));
    expect(cache.get('exp_a')?.matrix.toString()).to.equal('A');
    expect(cache.get('exp_b')?.matrix.toString()).to.equal('b');
    cache.delete('exp_a');
    expect(cache.get('exp_a')).to.equal(undefined);
    cache.set('exp_c', cells('c'), 'o'.repeat(11));
    expect(cache.get('exp_b')?.matrix.toString()).to.equal('b');
  });
});
