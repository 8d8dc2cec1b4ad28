import assert from 'node:assert/strict';
import { Backoff, backoffDelay, checkBackoffPolicy, DEFAULT_JITTER } from '../../../src/util/backoff.js';

describe('backoff', () => {
  it('backoff grows 1 s to 30 s with jitter below the nominal delay, and resets', () => {
    const b = new Backoff({ random: () => 0 });
    assert.deepEqual(
      Array.from({ length: 7 }, () => b.next()),
      [1000, 2000, 4000, 8000, 16000, 30000, 30000],
    );
    assert.equal(b.failures, 7);
    b.reset();
    assert.equal(b.next(), 1000);
    const j = new Backoff({ random: () => 1 });
    assert.equal(j.next(), 800);
    assert.throws(() => new Backoff({ initialMs: 0 }), /initialMs/);
  });

  it('backoffDelay: initialMs · factor^(failures − 1), at most maxMs', () => {
    const policy = { initialMs: 5, maxMs: 1000, jitter: 0 };
    assert.deepEqual(
      [0, 1, 2, 3, 8, 9, 10, 5000].map((n) => backoffDelay(policy, n)),
      [5, 5, 10, 20, 640, 1000, 1000, 1000],
    );
    assert.equal(backoffDelay({ initialMs: 100, maxMs: 10_000, factor: 3, jitter: 0 }, 3), 900);
  });

  it('jitter takes up to 20 % off by default and never adds: maxMs is a true maximum', () => {
    assert.equal(DEFAULT_JITTER, 0.2);
    const policy = { initialMs: 1000, maxMs: 30_000 };
    assert.equal(
      backoffDelay(policy, 1, () => 0),
      1000,
    );
    assert.equal(
      backoffDelay(policy, 1, () => 0.5),
      900,
    );
    assert.equal(
      backoffDelay(policy, 1, () => 1),
      800,
    );
    for (const r of [0, 0.3, 0.99, 1]) {
      const d = backoffDelay(policy, 10, () => r);
      assert.ok(d <= 30_000 && d >= 24_000, `${d}`);
    }
  });

  it('refuses policies that cannot give delays', () => {
    assert.throws(() => checkBackoffPolicy({ initialMs: 0, maxMs: 10 }), /initialMs/);
    assert.throws(() => checkBackoffPolicy({ initialMs: 20, maxMs: 10 }), /initialMs/);
    assert.throws(() => checkBackoffPolicy({ initialMs: 1, maxMs: 10, factor: 0.5 }), /factor/);
    assert.throws(() => checkBackoffPolicy({ initialMs: 1, maxMs: 10, jitter: 1 }), /jitter/);
    assert.doesNotThrow(() => checkBackoffPolicy({ initialMs: 1, maxMs: 1, jitter: 0 }));
  });
});
