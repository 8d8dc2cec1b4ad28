// The image puller's pull leases (src/daemon/imagepuller/pull-leases.ts) against a fake lease service: what a lease
// carries, earlier agents' leases deleted once before the first new one, and a service that fails: no lease (the
// pull goes on without one, warned once), a delete that fails logged and never thrown, no runtime leases at all.
import assert from 'node:assert/strict';
import type { LeaseStore } from '../../../src/cri/containerd-leases.js';
import {
  LEASE_OF_LABEL,
  LEASE_OF_VALUE,
  PULL_LEASE_TTL_MS,
  PullLeases,
} from '../../../src/daemon/imagepuller/pull-leases.js';
import { FakeClock } from '../../../src/util/clock.js';
import { capturingLogger } from '../../support/capturing-logger.js';

function store(fail: { create?: string; delete?: string; list?: string } = {}) {
  const leases = new Map<string, Record<string, string>>();
  const calls: string[] = [];
  const s: LeaseStore = {
    create(id, labels) {
      calls.push(`create ${id}`);
      if (fail.create) return Promise.reject(new Error(fail.create));
      leases.set(id, labels);
      return Promise.resolve();
    },
    delete(id) {
      calls.push(`delete ${id}`);
      if (fail.delete) return Promise.reject(new Error(fail.delete));
      leases.delete(id);
      return Promise.resolve();
    },
    listLabelled(key, value) {
      calls.push('list');
      if (fail.list) return Promise.reject(new Error(fail.list));
      return Promise.resolve([...leases].filter(([, l]) => l[key] === value).map(([id, labels]) => ({ id, labels })));
    },
  };
  return { s, leases, calls };
}

describe('imagepuller: pull leases', () => {
  const signal = new AbortController().signal;

  it('marks each lease ours with a 24 h expiry; deletes earlier agents’ leases once, first; release deletes it', async () => {
    const clock = new FakeClock(Date.parse('2026-11-29T10:00:00Z'));
    const { s, leases, calls } = store();
    leases.set('kruise-daemon-pull-earlier', { [LEASE_OF_LABEL]: LEASE_OF_VALUE });
    leases.set('someone-elses', { other: 'x' });
    const pulls = new PullLeases({ store: () => Promise.resolve(s), clock, logger: capturingLogger([]) });
    const [a, b] = await Promise.all([pulls.take(signal), pulls.take(signal)]);
    assert.ok(a && b && a.id !== b.id);
    assert.deepEqual(calls.slice(0, 2), ['list', 'delete kruise-daemon-pull-earlier'], 'the earlier lease first');
    assert.equal(calls.filter((c) => c === 'list').length, 1);
    assert.ok(leases.has('someone-elses'), 'a lease not ours is left alone');
    assert.deepEqual(leases.get(a.id), {
      [LEASE_OF_LABEL]: LEASE_OF_VALUE,
      'containerd.io/gc.expire': new Date(Date.parse('2026-11-29T10:00:00Z') + PULL_LEASE_TTL_MS).toISOString(),
    });
    await a.release();
    assert.ok(!leases.has(a.id) && leases.has(b.id));
  });

  it('a lease service that fails: no lease (warned once), deletes logged, never thrown; no service: no lease', async () => {
    const lines: string[] = [];
    const failing = store({ create: 'permission denied', list: 'unavailable' });
    const pulls = new PullLeases({
      store: () => Promise.resolve(failing.s),
      clock: new FakeClock(),
      logger: capturingLogger(lines),
    });
    assert.equal(await pulls.take(signal), undefined);
    assert.equal(await pulls.take(signal), undefined);
    assert.equal(lines.filter((l) => l.includes('cannot make a lease for a pull')).length, 1);
    assert.equal(lines.filter((l) => l.includes('earlier agent')).length, 1);

    const deleting = store({ delete: 'gone away' });
    const other = new PullLeases({
      store: () => Promise.resolve(deleting.s),
      clock: new FakeClock(),
      logger: capturingLogger(lines),
    });
    const lease = await other.take(signal);
    assert.ok(lease);
    await lease.release();
    assert.ok(lines.some((l) => l.includes('cannot delete a pull lease') && l.includes('gone away')));

    const none = new PullLeases({
      store: () => Promise.resolve(undefined),
      clock: new FakeClock(),
      logger: capturingLogger([]),
    });
    assert.equal(await none.take(signal), undefined);
  });
});
