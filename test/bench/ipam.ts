// kruise-ipam's cost: RunPodSandbox on the real containerd with kruise-ipam versus host-local in the same run
// (ratio of p50s), and one plugin ADD as containerd runs it (a fresh Node process: p50/p99) with its peak RSS.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectRuntime } from '../../src/cri/index.js';
import { installPluginBundled, pluginEntry } from '../../src/daemon/ipreservation/install.js';
import { createRegistry } from '../../src/observability/metrics.js';
import { installTestPlugin, rangeOf, removeTestConflist, Sandboxes, useNetwork } from '../component/ipam/network.js';
import { useCluster } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

const WARMUP = 3;

function pluginCall(dataDir: string, command: 'ADD' | 'DEL', id: string, entry = pluginEntry()): Promise<number> {
  const conf = JSON.stringify({
    cniVersion: '1.0.0',
    name: 'bench',
    ipam: { type: 'kruise-ipam', ranges: [[{ subnet: '10.251.0.0/16' }]], dataDir },
  });
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [entry], {
      env: { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_IFNAME: 'eth0', CNI_NETNS: '/x', CNI_ARGS: '' },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`${command} exited ${code}`)),
    );
    child.stdin.end(conf);
  });
}

function bareNode(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - started));
  });
}

/** Peak RSS (MiB) of one ADD, from GNU time. */
function addPeakRssMiB(dataDir: string, entry: string): number | undefined {
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, entry], {
    input: JSON.stringify({
      cniVersion: '1.0.0',
      name: 'bench',
      ipam: { type: 'kruise-ipam', ranges: [[{ subnet: '10.251.0.0/16' }]], dataDir },
    }),
    env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'rss', CNI_IFNAME: 'eth0', CNI_NETNS: '/x' },
    encoding: 'utf8',
  });
  const kib = Number(r.stderr.trim().split('\n').at(-1));
  return r.status === 0 && Number.isFinite(kib) ? kib / 1024 : undefined;
}

export const ipamSuite: BenchSuite = {
  name: 'ipam',
  description: 'kruise-ipam: RunPodSandbox vs host-local (ratio), one plugin ADD p50/p99 (bundle, modules), peak RSS',
  inDefaultRun: true,
  async run({ iterations, log, defer }) {
    const figures: Figure[] = [];
    const n = Math.max(5, Math.round(iterations / 4));

    // one ADD of the plugin process, as the runtime spawns it: the installed single-file bundle and the module
    // tree, interleaved so that load on the machine hits both alike
    const dataDir = mkdtempSync(join(tmpdir(), 'kruise-ipam-bench-'));
    defer(() => rmSync(dataDir, { recursive: true, force: true }));
    const bundled = installPluginBundled(join(dataDir, 'bin'), { copyNode: false }).entry;
    const entries: Array<[string, string]> = [
      ['bundle', bundled],
      ['modules', pluginEntry()],
    ];
    for (const [, entry] of entries) for (let i = 0; i < WARMUP; i++) await pluginCall(dataDir, 'ADD', `w${i}`, entry);
    log(`plugin ADD x${iterations} (bundle and module tree)`);
    const adds = new Map<string, number[]>(entries.map(([name]) => [name, []]));
    for (let i = 0; i < iterations; i++) {
      for (const [name, entry] of entries) {
        adds.get(name)!.push(await pluginCall(dataDir, 'ADD', `${name}${i}`, entry));
        await pluginCall(dataDir, 'DEL', `${name}${i}`, entry);
      }
    }
    for (const [name] of entries) {
      const samples = adds.get(name)!;
      const note = `n=${iterations}, fresh process${name === 'bundle' ? ' (what is installed)' : ''}`;
      figures.push({ name: `plugin.ADD.${name}.p50`, value: percentile(samples, 50), unit: 'ms', note });
      figures.push({ name: `plugin.ADD.${name}.p99`, value: percentile(samples, 99), unit: 'ms', note });
    }
    const bare: number[] = [];
    for (let i = 0; i < Math.min(iterations, 50); i++) bare.push(await bareNode());
    figures.push({ name: 'node.bare.p50', value: percentile(bare, 50), unit: 'ms', note: 'node -e 0, for reference' });
    const rss = addPeakRssMiB(dataDir, bundled);
    if (rss !== undefined) figures.push({ name: 'plugin.ADD.peakRss', value: rss, unit: 'MiB', note: 'GNU time %M' });

    // RunPodSandbox through containerd: host-local, then kruise-ipam, alternating blocks in the same run
    // (the runtime cluster's containerd alone, no Kubernetes: switching a real node's CNI config would switch its
    // kubelet's pods too)
    const cluster = await useCluster();
    const client = await connectRuntime({ socket: cluster.runtimeSocket, registry: createRegistry() });
    defer(() => client.close());
    const sandboxes = new Sandboxes(client, cluster);
    defer(() => sandboxes.removeAll());
    defer(() => removeTestConflist(cluster));
    installTestPlugin(cluster);

    const timeRuns = async (label: string, count: number): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        const s = await sandboxes.run(`bench-${label}-${i}`);
        samples.push(performance.now() - started);
        await sandboxes.remove(s.id);
      }
      return samples;
    };
    const hostLocal: number[] = [];
    const kruise: number[] = [];
    for (let block = 0; block < 2; block++) {
      removeTestConflist(cluster);
      await waitFor(
        async () => {
          const probe = await sandboxes.run('bench-probe');
          await sandboxes.remove(probe.id);
          return !probe.ip.startsWith(rangeOf(cluster, 0xcb00, 1).first.split('.').slice(0, 3).join('.'));
        },
        { timeoutMs: 20_000, message: 'containerd back on host-local' },
      );
      log(`RunPodSandbox host-local x${n} (block ${block + 1})`);
      hostLocal.push(...(await timeRuns('hl', n)));
      await useNetwork(cluster, sandboxes, 'kipam-bench', rangeOf(cluster, 0xcb00, 200));
      log(`RunPodSandbox kruise-ipam x${n} (block ${block + 1})`);
      kruise.push(...(await timeRuns('ki', n)));
    }
    const hl50 = percentile(hostLocal, 50);
    const ki50 = percentile(kruise, 50);
    const note = `n=${hostLocal.length} each, alternating blocks`;
    figures.push({ name: 'RunPodSandbox.host-local.p50', value: hl50, unit: 'ms', note });
    figures.push({ name: 'RunPodSandbox.kruise-ipam.p50', value: ki50, unit: 'ms', note });
    figures.push({ name: 'RunPodSandbox.kruise-ipam.p99', value: percentile(kruise, 99), unit: 'ms', note });
    figures.push({
      name: 'RunPodSandbox.ratio',
      value: ki50 / hl50,
      unit: 'x',
      note: 'kruise-ipam p50 / host-local p50',
    });
    return figures;
  },
};
