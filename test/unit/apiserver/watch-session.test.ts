// emulator: the subject under test (unit tests of the emulator's own modules)
import assert from 'node:assert/strict';
import { FakeClock } from '../../../src/util/clock.js';
import { configMapResource } from '../../cluster/apiserver/builtin/core.js';
import { WatchSession, type WatchOptions } from '../../cluster/apiserver/handlers/watch.js';
import { buildFilter } from '../../cluster/apiserver/object-filter.js';
import { ObjectStore } from '../../cluster/apiserver/store.js';
import type { KubeObject } from '../../cluster/apiserver/types.js';
import { WatchHub } from '../../cluster/apiserver/watch-hub.js';

interface Line {
  type: string;
  object: KubeObject & { code?: number; reason?: string; message?: string };
}

function setup(windowSize = 100) {
  const store = new ObjectStore();
  const hub = new WatchHub(store, windowSize);
  const clock = new FakeClock(0);
  const rt = configMapResource;
  const cm = (name: string, labels: Record<string, string> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels },
  });
  const open = (opts: Partial<WatchOptions>, labelSelector = '') => {
    const lines: Line[] = [];
    let ended = false;
    const session = new WatchSession(
      rt,
      buildFilter(rt, 'default', labelSelector, ''),
      {
        sinceRv: undefined,
        allowBookmarks: false,
        bookmarkIntervalMs: 1000,
        timeoutMs: undefined,
        asTable: false,
        ...opts,
      },
      { write: (l) => lines.push(JSON.parse(l) as Line), end: () => (ended = true) },
      { hub, store, clock },
    );
    session.start();
    return { lines, session, ended: () => ended };
  };
  return { store, hub, clock, rt, cm, open };
}

describe('apiserver watch session', () => {
  it('starts with ADDED for current objects when no resourceVersion is given', () => {
    const { store, rt, cm, open } = setup();
    store.create(rt.storageKey, cm('a'));
    store.create(rt.storageKey, cm('b'));
    const w = open({});
    assert.deepEqual(
      w.lines.map((l) => [l.type, l.object.metadata.name]),
      [
        ['ADDED', 'a'],
        ['ADDED', 'b'],
      ],
    );
  });

  it('replays from a resourceVersion without gap or duplicate, then continues live', () => {
    const { store, rt, cm, open } = setup();
    const a = store.create(rt.storageKey, cm('a'));
    const b = store.create(rt.storageKey, cm('b'));
    store.update(rt.storageKey, { ...a, data: { k: 'v' } }, a);
    const w = open({ sinceRv: Number(b.metadata.resourceVersion) });
    store.create(rt.storageKey, cm('c'));
    assert.deepEqual(
      w.lines.map((l) => [l.type, l.object.metadata.name, l.object.metadata.resourceVersion]),
      [
        ['MODIFIED', 'a', '3'],
        ['ADDED', 'c', '4'],
      ],
    );
  });

  it('sends ERROR 410 Expired for a resourceVersion older than the window, then ends', () => {
    const { store, rt, cm, open } = setup(2);
    for (const n of ['a', 'b', 'c', 'd']) store.create(rt.storageKey, cm(n));
    const w = open({ sinceRv: 1 });
    assert.equal(w.lines.length, 1);
    assert.equal(w.lines[0]!.type, 'ERROR');
    assert.equal(w.lines[0]!.object.code, 410);
    assert.equal(w.lines[0]!.object.reason, 'Expired');
    assert.match(w.lines[0]!.object.message!, /too old resource version: 1 \(2\)/);
    assert.equal(w.ended(), true);
  });

  it('turns leaving the selector into DELETED and entering into ADDED', () => {
    const { store, rt, cm, open } = setup();
    const w = open({}, 'app=x');
    const a = store.create(rt.storageKey, cm('a', { app: 'y' }));
    const a2 = store.update(rt.storageKey, cm('a', { app: 'x' }), a);
    const a3 = store.update(rt.storageKey, { ...cm('a', { app: 'x' }), data: { k: '1' } }, a2);
    const a4 = store.update(rt.storageKey, cm('a', { app: 'z' }), a3);
    store.remove(rt.storageKey, a4);
    assert.deepEqual(
      w.lines.map((l) => [l.type, l.object.metadata.labels?.app, l.object.metadata.resourceVersion]),
      [
        ['ADDED', 'x', '2'],
        ['MODIFIED', 'x', '3'],
        ['DELETED', 'x', '4'],
      ],
    );
  });

  it('sends bookmarks every interval and one at the timeout, then ends', async () => {
    const { store, rt, cm, clock, open } = setup();
    const w = open({ allowBookmarks: true, bookmarkIntervalMs: 1000, timeoutMs: 2500 });
    store.create(rt.storageKey, cm('a'));
    await clock.advance(1000);
    assert.deepEqual(
      w.lines.map((l) => [l.type, l.object.metadata.resourceVersion]),
      [
        ['ADDED', '1'],
        ['BOOKMARK', '1'],
      ],
    );
    assert.equal(w.lines[1]!.object.kind, 'ConfigMap');
    store.create(rt.storageKey, cm('b'));
    await clock.advance(1500);
    assert.deepEqual(
      w.lines.map((l) => l.type),
      ['ADDED', 'BOOKMARK', 'ADDED', 'BOOKMARK', 'BOOKMARK'],
    );
    assert.equal(w.lines.at(-1)!.object.metadata.resourceVersion, '2');
    assert.equal(w.ended(), true);
    assert.equal(clock.pendingTimers(), 0);
  });

  it('stops delivering after close', () => {
    const { store, rt, cm, hub, open } = setup();
    const w = open({});
    w.session.close();
    store.create(rt.storageKey, cm('a'));
    assert.equal(w.lines.length, 0);
    assert.equal(hub.count(), 0);
  });
});
