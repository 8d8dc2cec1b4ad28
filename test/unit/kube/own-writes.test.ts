import assert from 'node:assert/strict';
import type { InformerHandlers } from '../../../src/kube/informer/informer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { OWN_WRITE_DEADLINE_MS, OwnWriteExpectations } from '../../../src/kube/own-writes.js';
import { FakeClock } from '../../../src/util/clock.js';

function objectAt(name: string, resourceVersion: string): KubeObject {
  return { metadata: { name, resourceVersion } };
}

describe('OwnWriteExpectations', () => {
  it('is fresh when nothing was written', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    assert.equal(e.isFresh('k', '5'), true);
    assert.equal(e.isFresh('k', undefined), true);
  });

  it('holds until the cache shows the version our write produced, then lets go', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    e.expect('k', '10');
    assert.equal(e.isFresh('k', '9'), false);
    assert.equal(e.isFresh('k', undefined), false, 'a create not yet in the cache');
    assert.equal(e.isFresh('k', '10'), true);
    assert.equal(e.size, 0);
    assert.equal(e.isFresh('k', '9'), true, 'nothing expected any more');
  });

  it('never compares resourceVersions as numbers', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    e.expect('k', '10');
    assert.equal(e.isFresh('k', '11'), false, 'an unobserved other version may be older than our write');
    assert.equal(e.isFresh('k', '9'), false);
  });

  it('is fresh once the informer has delivered our version, even if a later write replaced it in the cache', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    e.expect('k', '10');
    e.observe('k', '7');
    assert.equal(e.isFresh('k', '7'), false, 'another version observed: still waiting');
    e.observe('k', '10');
    assert.equal(e.isFresh('k', '11'), true);
    assert.equal(e.size, 0);
  });

  it('counts our version delivered before the write returned, even when a later one replaced it', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    e.observe('k', '10'); // our write, seen by the watch first
    e.observe('k', '11'); // someone else's, right after
    e.expect('k', '10');
    assert.equal(e.size, 0);
    assert.equal(e.isFresh('k', '11'), true);
  });

  it('remembers the last 8 versions delivered, and forgets them with the object', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    for (let v = 1; v <= 9; v++) e.observe('k', String(v));
    e.expect('k', '1');
    assert.equal(e.isFresh('k', '9'), false, 'version 1 has dropped out');
    e.expect('k', '2');
    assert.equal(e.size, 0);
    e.forget('k');
    e.expect('k', '9');
    assert.equal(e.size, 1, 'delivered versions go with the object');
  });

  it('sweeps objects not delivered within a deadline', async () => {
    const clock = new FakeClock(0);
    const e = new OwnWriteExpectations(clock, 1000);
    e.observe('old', '1');
    await clock.advance(1001);
    for (let i = 0; i < 1024; i++) e.observe('busy', String(i));
    e.expect('old', '1');
    assert.equal(e.size, 1, 'what "old" delivered was swept');
    e.expect('busy', '1023');
    assert.equal(e.size, 1, 'what "busy" delivered was kept');
  });

  it('is fresh after the deadline (a relist may skip our version)', async () => {
    const clock = new FakeClock(0);
    const e = new OwnWriteExpectations(clock, 1000);
    e.expect('k', '20');
    await clock.advance(1000);
    assert.equal(e.isFresh('k', '19'), false, 'at the deadline: still waiting');
    await clock.advance(1);
    assert.equal(e.isFresh('k', '19'), true);
    assert.equal(e.size, 0);
  });

  it('waits 10 s by default', async () => {
    const clock = new FakeClock(0);
    const e = new OwnWriteExpectations(clock);
    assert.equal(OWN_WRITE_DEADLINE_MS, 10_000);
    e.expect('k', '2');
    await clock.advance(10_000);
    assert.equal(e.isFresh('k', '1'), false);
    await clock.advance(1);
    assert.equal(e.isFresh('k', '1'), true);
  });

  it('forgets an object that is gone, and a write with no resourceVersion expects nothing', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    e.expect('k', '3');
    e.forget('k');
    assert.equal(e.isFresh('k', '2'), true);
    e.expect('k', undefined);
    assert.equal(e.size, 0);
  });

  it('a newer write replaces the one expected before', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    e.expect('k', '3');
    e.expect('k', '4');
    assert.equal(e.isFresh('k', '3'), false);
    assert.equal(e.isFresh('k', '4'), true);
  });

  it('follows an informer: adds and updates are observed, deletes forget', () => {
    const e = new OwnWriteExpectations(new FakeClock());
    let handlers: InformerHandlers<KubeObject> = {};
    let removed = false;
    const informer = {
      addHandlers(h: InformerHandlers<KubeObject>) {
        handlers = h;
        return () => {
          removed = true;
        };
      },
    };
    const stop = e.follow(informer, (o) => o.metadata?.name ?? '');
    e.expect('a', '2');
    e.expect('b', '5');
    e.expect('c', '8');
    handlers.onAdd?.(objectAt('a', '2'));
    handlers.onUpdate?.(objectAt('b', '4'), objectAt('b', '5'));
    handlers.onDelete?.(objectAt('c', '7'));
    assert.equal(e.size, 0);
    stop();
    assert.equal(removed, true);
  });
});
