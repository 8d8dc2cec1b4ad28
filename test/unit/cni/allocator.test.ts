import assert from 'node:assert/strict';
import { assign, collect, expire, freeCount, heldBy, release, type AddRequest } from '../../../src/cni/allocator.js';
import { parseIpamConfig, type IpamConfig } from '../../../src/cni/config.js';
import { CniError } from '../../../src/cni/errors.js';
import { buildResult } from '../../../src/cni/result.js';
import { emptyState, type NetworkState } from '../../../src/cni/state.js';

const MIN = 60_000;

function config(ranges: unknown[][], version = '1.0.0'): IpamConfig {
  return parseIpamConfig({ cniVersion: version, name: 'n', ipam: { ranges } });
}

function req(containerId: string, name?: string, minutes?: number, uid = `uid-${containerId}`): AddRequest {
  return {
    containerId,
    ifName: 'eth0',
    pod: name ? { namespace: 'ns', name, uid } : undefined,
    reservedMinutes: minutes,
  };
}

const ips = (state: NetworkState, containerId: string) =>
  heldBy(state, { containerId, ifName: 'eth0' }).map((h) => h.ip);

describe('cni allocator: allocation, reservation, expiry', () => {
  const small = config([[{ subnet: '10.0.0.0/29' }]]); // hands out .2-.6 (.1 gateway, .7 broadcast)
  let state: NetworkState;
  beforeEach(() => (state = emptyState()));

  it('hands out addresses round-robin, skipping the gateway, and fails with code 100 when full', () => {
    const got = ['a', 'b', 'c', 'd', 'e'].map((c) => assign(state, small, req(c), 0)[0]!.ip);
    assert.deepEqual(got, ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    assert.equal(freeCount(state, small.rangeSets[0]!), 0n);
    assert.throws(
      () => assign(state, small, req('f'), 0),
      (e: unknown) => e instanceof CniError && e.code === 100,
    );
    release(state, { containerId: 'b', ifName: 'eth0' }, undefined, MIN, 0);
    // round-robin: after .6 the search wraps to the freed .3
    assert.equal(assign(state, small, req('g'), 0)[0]!.ip, '10.0.0.3');
  });

  it('does not reuse a just-freed address before the range wraps (like host-local)', () => {
    assign(state, small, req('a'), 0);
    release(state, { containerId: 'a', ifName: 'eth0' }, undefined, MIN, 0);
    assert.equal(assign(state, small, req('b'), 0)[0]!.ip, '10.0.0.3');
  });

  it('is idempotent per attachment: the same ADD gets the same address', () => {
    const first = assign(state, small, req('a'), 0);
    assert.deepEqual(assign(state, small, req('a'), 5), first);
    assert.equal(Object.keys(state.entries).length, 1);
  });

  it('gives one address per range set (dual stack) and spreads over several ranges of a set', () => {
    const dual = config([[{ subnet: '10.0.0.0/30' }, { subnet: '10.0.1.0/30' }], [{ subnet: 'fd00::/125' }]]);
    const a = assign(state, dual, req('a'), 0);
    assert.deepEqual(
      a.map((x) => x.ip),
      ['10.0.0.2', 'fd00::2'],
    );
    const b = assign(state, dual, req('b'), 0);
    assert.deepEqual(
      b.map((x) => x.ip),
      ['10.0.1.2', 'fd00::3'],
    );
    const result = buildResult(dual, b);
    assert.deepEqual(result.ips, [
      { address: '10.0.1.2/30', gateway: '10.0.1.1' },
      { address: 'fd00::3/125', gateway: 'fd00::1' },
    ]);
  });

  it('fails the whole ADD when one set is full (IPv6 /126 has one usable address besides its gateway)', () => {
    const dual = config([[{ subnet: '10.0.0.0/24' }], [{ subnet: 'fd00::/126' }]]);
    assert.deepEqual(
      assign(state, dual, req('a'), 0).map((x) => x.ip),
      ['10.0.0.2', 'fd00::2'],
    );
    assert.throws(() => assign(state, dual, req('b'), 0), /no free address left in range set fd00::\/126/);
  });

  it('DEL with a duration keeps the address for the namespace/name; a new UID and sandbox get it back', () => {
    assign(state, small, req('old', 'web-0', 1), 0);
    assign(state, small, req('other', 'web-1'), 0);
    const out = release(state, { containerId: 'old', ifName: 'eth0' }, undefined, MIN, 1000);
    assert.deepEqual(out, [{ ip: '10.0.0.2', reserved: true }]);
    const reserved = state.entries['10.0.0.2']!;
    assert.equal(reserved.kind, 'reserved');
    assert.equal(reserved.kind === 'reserved' && reserved.expiresAt, 1000 + MIN);
    // a pod created meanwhile never gets it
    assert.notEqual(assign(state, small, req('meanwhile', 'web-2'), 2000)[0]!.ip, '10.0.0.2');
    // the same name with a new uid and sandbox id does
    const back = assign(state, small, req('new', 'web-0', 1, 'uid-new'), 3000);
    assert.deepEqual(back, [{ ip: '10.0.0.2', set: '10.0.0.0/29', reused: true }]);
    assert.equal(state.notes.at(-1)?.kind, 'reused');
    assert.equal(state.notes.at(-1)?.pod?.uid, 'uid-new');
    // the old sandbox's late DEL (RemovePodSandbox) changes nothing
    assert.deepEqual(release(state, { containerId: 'old', ifName: 'eth0' }, undefined, MIN, 4000), []);
    assert.deepEqual(ips(state, 'new'), ['10.0.0.2']);
  });

  it('after expiry the reserved address is free again; expiry of a reused one frees nothing it should not', () => {
    assign(state, small, req('old', 'db-0', 1), 0);
    release(state, { containerId: 'old', ifName: 'eth0' }, undefined, MIN, 0);
    assert.deepEqual(expire(state, MIN - 1), []);
    assert.deepEqual(
      expire(state, MIN).map((e) => e.ip),
      ['10.0.0.2'],
    );
    assert.equal(state.entries['10.0.0.2'], undefined);
    assert.equal(state.notes.at(-1)?.kind, 'expired');
    // OpenKruise's defect: a reused reservation leaked at expiry. Here the reused address is held, so nothing expires
    assign(state, small, req('x', 'db-1', 1), MIN);
    release(state, { containerId: 'x', ifName: 'eth0' }, undefined, MIN, MIN);
    assign(state, small, req('y', 'db-1', 1), MIN + 1);
    assert.deepEqual(expire(state, 10 * MIN), []);
    assert.equal(ips(state, 'y').length, 1);
    release(state, { containerId: 'y', ifName: 'eth0' }, 0, MIN, 10 * MIN);
    assert.deepEqual(Object.keys(state.entries), []);
  });

  it('an explicit zero at DEL frees; a DEL without annotations uses the duration recorded at ADD', () => {
    assign(state, small, req('a', 'p', 5), 0);
    assert.deepEqual(release(state, { containerId: 'a', ifName: 'eth0' }, 0, MIN, 0), [
      { ip: '10.0.0.2', reserved: false },
    ]);
    assign(state, small, req('b', 'p', 5), 0);
    release(state, { containerId: 'b', ifName: 'eth0' }, undefined, MIN, 0);
    const e = state.entries['10.0.0.3']!;
    assert.ok(e.kind === 'reserved' && e.minutes === 5 && e.expiresAt === 5 * MIN);
  });

  it('without a pod identity nothing is reserved', () => {
    assign(state, small, req('a', undefined, 5), 0);
    assert.deepEqual(release(state, { containerId: 'a', ifName: 'eth0' }, 5, MIN, 0), [
      { ip: '10.0.0.2', reserved: false },
    ]);
  });

  it('keeps one reservation per pod name: a newer one frees the older', () => {
    assign(state, small, req('a', 'p', 5), 0);
    assign(state, small, req('b', 'p', 5), 0); // same name, second sandbox alive at once
    release(state, { containerId: 'a', ifName: 'eth0' }, undefined, MIN, 10);
    release(state, { containerId: 'b', ifName: 'eth0' }, undefined, MIN, 20);
    const reserved = Object.entries(state.entries).filter(([, e]) => e.kind === 'reserved');
    assert.deepEqual(
      reserved.map(([ip]) => ip),
      ['10.0.0.3'],
    );
    assert.ok(state.notes.some((n) => n.kind === 'superseded' && n.ip === '10.0.0.2'));
  });

  it('a reservation outside the configured ranges is freed, not handed out', () => {
    assign(state, small, req('a', 'p', 5), 0);
    release(state, { containerId: 'a', ifName: 'eth0' }, undefined, MIN, 0);
    const moved = config([[{ subnet: '10.0.0.0/29', rangeStart: '10.0.0.4' }]]);
    assert.equal(assign(state, moved, req('b', 'p', 5), 1)[0]!.ip, '10.0.0.4');
    assert.equal(state.entries['10.0.0.2'], undefined);
  });

  it('GC releases attachments the runtime no longer has (respecting reservations and an age limit)', () => {
    assign(state, small, req('live'), 0);
    assign(state, small, req('gone', 'p', 3), 0);
    assign(state, small, req('young'), 100);
    const out = collect(state, (a) => a.containerId === 'live', MIN, 200, 50);
    assert.deepEqual(out, [{ ip: '10.0.0.3', reserved: true }]);
    assert.deepEqual(ips(state, 'young'), ['10.0.0.4']);
    assert.deepEqual(ips(state, 'live'), ['10.0.0.2']);
  });

  it('writes results in 0.3.x/0.4.0 form with a version per address', () => {
    const legacy = config([[{ subnet: '10.0.0.0/29' }], [{ subnet: 'fd00::/125' }]], '0.4.0');
    const r = buildResult(legacy, assign(state, legacy, req('a'), 0));
    assert.equal(r.cniVersion, '0.4.0');
    assert.deepEqual(r.ips, [
      { version: '4', address: '10.0.0.2/29', gateway: '10.0.0.1' },
      { version: '6', address: 'fd00::2/125', gateway: 'fd00::1' },
    ]);
  });
});
