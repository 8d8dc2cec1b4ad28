// The benches' summary statistics: nearest-rank percentiles, and a p50/p99 pair of figures.
import assert from 'node:assert/strict';
import { p50p99, percentile } from '../../bench/stats.js';

describe('bench stats', () => {
  it('takes percentiles by nearest rank: a value that was observed', () => {
    const samples = [5, 1, 4, 2, 3];
    assert.equal(percentile(samples, 50), 3);
    assert.equal(percentile(samples, 99), 5);
    assert.throws(() => percentile([], 50), /no samples/);
  });

  it('gives <name>.p50 with the note and <name>.p99, in ms to a tenth', () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 0.26);
    assert.deepEqual(p50p99('start', samples, 'why'), [
      { name: 'start.p50', value: 49.3, unit: 'ms', note: 'why' },
      { name: 'start.p99', value: 98.3, unit: 'ms' },
    ]);
    assert.deepEqual(p50p99('x', [1.04]), [
      { name: 'x.p50', value: 1, unit: 'ms' },
      { name: 'x.p99', value: 1, unit: 'ms' },
    ]);
  });
});
