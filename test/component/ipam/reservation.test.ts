// kruise-ipam on the real containerd: sandboxes through CRI with pod annotations, the plugin called by containerd
// through the bridge plugin, the agent's controller running beside it on the real clock and the real runtime.
import assert from 'node:assert/strict';
import { readState, storePaths } from '../../../src/cni/store.js';
import { RESERVED_IP_DURATION_ANNOTATION } from '../../../src/cni/config.js';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { IpReservationController } from '../../../src/daemon/ipreservation/controller.js';
import { ipamMetrics } from '../../../src/daemon/ipreservation/metrics.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { systemClock } from '../../../src/util/clock.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import { installTestPlugin, rangeOf, removeTestConflist, Sandboxes, useNetwork, type TestNetwork } from './network.js';

const MINUTE_MS = 5000; // ipam.testOnlyMinuteMs: reserved-ip-duration "1" lasts 5 s here
const ONE_MINUTE = { [RESERVED_IP_DURATION_ANNOTATION]: '1' };

describe('kruise-ipam with containerd: reservations, concurrency, GC', function () {
  let cluster: ClusterEnv;
  let client: CriClient;
  let sandboxes: Sandboxes;
  let controller: IpReservationController | undefined;
  const events: string[] = [];

  before(async function () {
    cluster = await useCluster();
    client = await connectRuntime({ socket: cluster.runtimeSocket, env: {} });
    sandboxes = new Sandboxes(client, cluster);
    installTestPlugin(cluster);
  });

  after(async function () {
    await controller?.stop();
    if (sandboxes) await sandboxes.removeAll();
    if (cluster) removeTestConflist(cluster);
    client?.close();
  });

  function startController(network: TestNetwork): IpReservationController {
    controller = new IpReservationController({
      dataDir: network.dataDir,
      clock: systemClock,
      logger: silentLogger,
      metrics: ipamMetrics(createRegistry()),
      runtime: () => Promise.resolve(client),
      events: { event: (pod, _type, reason) => events.push(`${reason} ${pod.namespace}/${pod.name} ${pod.uid ?? ''}`) },
      gcIntervalMs: 3_600_000,
      gcGraceMs: 0,
    });
    controller.start();
    return controller;
  }

  it('keeps a reserved IP for the pod name, never gives it to another pod, and frees it on expiry', async function () {
    const net = await useNetwork(cluster, sandboxes, 'kipam-reserve', rangeOf(cluster, 0xc800, 4), MINUTE_MS);
    startController(net);
    const a = await sandboxes.run('a', ONE_MINUTE);
    const fillers = [await sandboxes.run('b'), await sandboxes.run('c'), await sandboxes.run('d')];
    const ips = [a.ip, ...fillers.map((f) => f.ip)];
    assert.equal(new Set(ips).size, 4, `four distinct addresses: ${ips.join(' ')}`);
    assert.ok(ips.every(net.contains));

    await sandboxes.remove(a.id); // StopPodSandbox + RemovePodSandbox: two DELs
    const paths = storePaths(net.dataDir, net.name);
    const reserved = readState(paths).entries[a.ip];
    assert.equal(reserved?.kind, 'reserved', 'the IP of ns/a is reserved, not freed');

    // a pod created meanwhile never gets it: the range is full except for the reservation
    await assert.rejects(sandboxes.run('e'), /no free address left/);

    const again = await sandboxes.run('a', ONE_MINUTE); // same name, new UID, new sandbox
    assert.notEqual(again.id, a.id);
    assert.equal(again.ip, a.ip, 'the recreated pod got its IP back');
    await waitFor(() => events.some((e) => e.startsWith('IPReused ipam-test/a ')), { message: 'the IPReused event' });

    // no annotation: DEL frees at once
    await sandboxes.remove(fillers[0]!.id);
    assert.equal(readState(paths).entries[fillers[0]!.ip], undefined);

    // the reservation ends on time: the agent's timer frees it without any ADD
    await sandboxes.remove(again.id);
    assert.equal(readState(paths).entries[a.ip]?.kind, 'reserved');
    await waitFor(() => readState(paths).entries[a.ip] === undefined, {
      timeoutMs: 3 * MINUTE_MS,
      message: 'the reservation to expire',
    });
    // ... and the address is handed out again
    const f = await sandboxes.run('f');
    const g = await sandboxes.run('g');
    assert.ok([f.ip, g.ip].includes(a.ip), `${a.ip} handed out again (got ${f.ip}, ${g.ip})`);
  });

  it('gives 50 concurrent sandboxes 50 distinct addresses and frees them all', async function () {
    await sandboxes.removeAll();
    await controller?.stop();
    controller = undefined;
    const net = await useNetwork(cluster, sandboxes, 'kipam-many', rangeOf(cluster, 0xc900, 64));
    const started = await Promise.all(Array.from({ length: 50 }, (_, i) => sandboxes.run(`many-${i}`)));
    const ips = started.map((s) => s.ip);
    assert.equal(new Set(ips).size, 50, 'distinct');
    assert.ok(ips.every(net.contains));
    const paths = storePaths(net.dataDir, net.name);
    const held = Object.entries(readState(paths).entries).filter(([, e]) => e.kind === 'held');
    assert.deepEqual(
      held.map(([ip, e]) => `${ip} ${e.kind === 'held' ? e.containerId : ''}`).sort(),
      started.map((s) => `${s.ip} ${s.id}`).sort(),
    );
    await Promise.all(started.map((s) => sandboxes.remove(s.id)));
    assert.deepEqual(readState(paths).entries, {});
  });

  it('the agent GC frees addresses of sandboxes the runtime no longer has, and only those', async function () {
    const net = await useNetwork(cluster, sandboxes, 'kipam-gc', rangeOf(cluster, 0xca00, 16));
    const live = await sandboxes.run('live');
    const paths = storePaths(net.dataDir, net.name);
    // a sandbox that vanished without DEL (e.g. the runtime's state was wiped): its entry is left in the store
    const { update } = await import('../../../src/cni/store.js');
    await update(
      paths,
      (ms) => systemClock.sleep(ms),
      (s) => {
        s.entries['10.0.0.0'] = { kind: 'held', set: 'x', containerId: 'f'.repeat(64), ifName: 'eth0', allocatedAt: 0 };
        return { changed: true, value: undefined };
      },
    );
    const ctl = startController(net);
    assert.equal(await ctl.collectGarbage(), 1);
    const entries = readState(paths).entries;
    assert.equal(entries['10.0.0.0'], undefined);
    assert.equal(entries[live.ip]?.kind, 'held', 'the live sandbox keeps its address');
  });
});
