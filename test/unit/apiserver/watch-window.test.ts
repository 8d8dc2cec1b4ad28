// emulator: the subject under test (unit tests of the emulator's own modules)
import assert from 'node:assert/strict';
import type { StoreEvent } from '../../cluster/apiserver/store.js';
import { WatchWindow } from '../../cluster/apiserver/watch-window.js';

function event(rv: number): StoreEvent {
  return { type: 'ADDED', storageKey: 'core/configmaps', object: { metadata: { name: `o${rv}` } }, rv };
}

describe('apiserver watch window', () => {
  it('replays exactly the events after a resourceVersion', () => {
    const w = new WatchWindow(10, 0);
    for (let rv = 1; rv <= 5; rv++) w.push(event(rv));
    assert.deepEqual(
      w.since(2)?.map((e) => e.rv),
      [3, 4, 5],
    );
    assert.deepEqual(
      w.since(0)?.map((e) => e.rv),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(w.since(5), []);
    assert.deepEqual(w.since(9), []);
  });

  it('expires resourceVersions older than the kept window', () => {
    const w = new WatchWindow(3, 0);
    for (let rv = 1; rv <= 7; rv++) w.push(event(rv));
    assert.equal(w.oldestResumableRv(), 4);
    assert.equal(w.since(3), undefined);
    assert.deepEqual(
      w.since(4)?.map((e) => e.rv),
      [5, 6, 7],
    );
  });

  it('starts empty at the current resourceVersion (after a restore)', () => {
    const w = new WatchWindow(5, 100);
    assert.equal(w.since(99), undefined);
    assert.deepEqual(w.since(100), []);
    w.push(event(101));
    assert.deepEqual(
      w.since(100)?.map((e) => e.rv),
      [101],
    );
  });

  it('compact forgets everything before the current resourceVersion', () => {
    const w = new WatchWindow(10, 0);
    for (let rv = 1; rv <= 4; rv++) w.push(event(rv));
    w.compact(4);
    assert.equal(w.since(3), undefined);
    assert.deepEqual(w.since(4), []);
    w.push(event(5));
    assert.deepEqual(
      w.since(4)?.map((e) => e.rv),
      [5],
    );
  });

  it('refuses a non-positive capacity', () => {
    assert.throws(() => new WatchWindow(0, 0), /positive integer/);
  });
});
