// SIGKILL of the kruise-ipam processes containerd spawns, at random points, while sandboxes are created and removed
// concurrently: checked against the runtime, no two live sandboxes share an address, and after the agent's GC the
// store holds exactly the live sandboxes' addresses (no leak), and nothing once they are gone.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { readState, storePaths } from '../../../src/cni/store.js';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { IpReservationController } from '../../../src/daemon/ipreservation/controller.js';
import { ipamMetrics } from '../../../src/daemon/ipreservation/metrics.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { systemClock } from '../../../src/util/clock.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { installTestPlugin, rangeOf, removeTestConflist, Sandboxes, useNetwork } from './network.js';

/** PIDs of running kruise-ipam processes of this build (the cluster's containerd spawns them for our sandboxes). */
function isPlugin(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes(entry);
  } catch {
    return false; // gone
  }
}

function pluginPids(entry: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => isPlugin(pid, entry));
}

describe('kruise-ipam under SIGKILL while containerd runs it', function () {
  let cluster: ClusterEnv;
  let client: CriClient;
  let sandboxes: Sandboxes;
  let entry: string;

  before(async () => {
    cluster = await useCluster();
    client = await connectRuntime({ socket: cluster.runtimeSocket, env: {} });
    sandboxes = new Sandboxes(client, cluster);
    entry = installTestPlugin(cluster);
  });
  after(async () => {
    if (sandboxes) await sandboxes.removeAll();
    if (cluster) removeTestConflist(cluster);
    client?.close();
  });

  it('never gives two live sandboxes one address and leaks nothing after GC', async function () {
    const net = await useNetwork(cluster, sandboxes, 'kipam-kill', rangeOf(cluster, 0xcd00, 64));
    const seen = new Set<number>();
    let kills = 0;
    let running = true;
    const killer = (async () => {
      while (running) {
        for (const pid of pluginPids(entry)) {
          if (seen.has(pid)) continue;
          seen.add(pid);
          if (Math.random() < 0.5) {
            setTimeout(
              () => {
                try {
                  // PIDs are recycled quickly while containerd forks: kill only if it is still the plugin
                  if (!isPlugin(pid, entry)) return;
                  process.kill(pid, 'SIGKILL');
                  kills++;
                } catch {
                  // it finished first
                }
              },
              Math.floor(Math.random() * 70),
            ).unref();
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    })();

    const live: string[] = [];
    let failedRuns = 0;
    try {
      for (let round = 0; round < 12; round++) {
        const runs = [0, 1, 2].map((i) =>
          sandboxes.run(`kill-${round}-${i}`).then(
            (s) => void live.push(s.id),
            () => void failedRuns++,
          ),
        );
        const victim = live.length > 3 ? live.splice(Math.floor(Math.random() * live.length), 1)[0] : undefined;
        const removal = victim
          ? client
              .stopPodSandbox({ pod_sandbox_id: victim })
              .then(() => client.removePodSandbox({ pod_sandbox_id: victim }))
              .catch(() => undefined) // a killed DEL fails the stop: cleaned up below, like kubelet's retries
          : Promise.resolve();
        await Promise.all([...runs, removal]);
      }
    } finally {
      running = false;
      await killer;
    }
    assert.ok(kills > 5, `kills landed: ${kills}`);

    // the runtime's view: every ready sandbox of ours, with its address
    const { items } = await client.listPodSandbox({
      filter: { label_selector: { 'kruise-daemon.test/ipam': 'true' } },
    });
    const ready = items.filter((s) => s.state === 'SANDBOX_READY');
    const addresses = new Map<string, string>();
    for (const s of ready) {
      const { status } = await client.podSandboxStatus({ pod_sandbox_id: s.id });
      const ip = status?.network?.ip ?? '';
      if (ip !== '') addresses.set(s.id, ip);
    }
    const ips = [...addresses.values()];
    assert.equal(new Set(ips).size, ips.length, `no duplicate among live sandboxes: ${ips.join(' ')}`);

    // sandboxes that are not ready (a killed DEL failed their stop) are stopped again, as kubelet retries
    for (const s of items.filter((x) => x.state !== 'SANDBOX_READY')) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const ok = await client.stopPodSandbox({ pod_sandbox_id: s.id }).then(
          () => client.removePodSandbox({ pod_sandbox_id: s.id }).then(() => true),
          () => false,
        );
        if (ok) break;
      }
    }

    const controller = new IpReservationController({
      dataDir: net.dataDir,
      clock: systemClock,
      logger: silentLogger,
      metrics: ipamMetrics(createRegistry()),
      runtime: () => Promise.resolve(client),
      gcIntervalMs: 3_600_000,
      gcGraceMs: 0,
      watch: false,
    });
    try {
      await controller.collectGarbage();
    } finally {
      await controller.stop();
    }
    const paths = storePaths(net.dataDir, net.name);
    const held = Object.entries(readState(paths).entries)
      .map(([ip, e]) => `${e.kind === 'held' ? e.containerId : `reserved:${e.pod.name}`} ${ip}`)
      .sort();
    assert.deepEqual(
      held,
      [...addresses].map(([id, ip]) => `${id} ${ip}`).sort(),
      'the store holds exactly the addresses of the live sandboxes',
    );

    await sandboxes.removeAll();
    const left = await client.listPodSandbox({ filter: { label_selector: { 'kruise-daemon.test/ipam': 'true' } } });
    for (const s of left.items) {
      await client.stopPodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
      await client.removePodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
    }
    assert.deepEqual(
      readState(paths).entries,
      {},
      `nothing left after every sandbox is gone (failed runs: ${failedRuns})`,
    );
  });
});
