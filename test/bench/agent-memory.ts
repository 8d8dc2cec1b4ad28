// The agent's resident memory on a node of the real local cluster, as deployed (inside the node, the kruise-daemon
// ServiceAccount's token, the node's CRI socket, IP retention on): first on an empty node, then at steady state with
// 110 pods running on it (kubelet's default maxPods; the node runs no pod of ours: the agent and kube-proxy are
// processes), each time with the DaemonSet's V8 heap flags and with Node's defaults. RSS is sampled from
// /proc/PID/status once the agent is ready and has settled. The figures of the lite cluster (API emulator, pods only
// registered) are printed beside, with the ratio.
import { CoreResources } from '../../src/kube/resource.js';
import type { KubeObject } from '../../src/kube/object.js';
import type { WirePod } from '../../src/api/wire.js';
import { daemonSetNodeOptions } from '../cluster/deployed-agent.js';
import type { NodeLayout } from '../cluster/k8s/layout.js';
import { rssMiB } from '../component/daemon/agent-process.js';
import { startAgentOn, useRealCluster, type RealCluster } from '../support/real-cluster.js';
import { waitFor } from '../support/wait.js';
import type { BenchContext, BenchSuite, Figure } from './framework.js';
import { deleteTestNamespace, ensureNamespace } from '../support/test-namespace.js';

/** NODE_OPTIONS of deploy/base/daemon/daemonset.yaml (read from it). */
export const DAEMONSET_HEAP_FLAGS = daemonSetNodeOptions();

/** The project's budget: the agent under 100 MiB with 110 pods on its node. */
const BUDGET_MIB = 100;
export const PODS_ON_NODE = 110;
/**
 * The same agent measured on the lite cluster before it went (heap flags): idle against the API emulator (issue 1's
 * closing note) and with 110 pods registered with the emulator only, not run (docs/container-recreate.md, crr bench).
 */
const LITE_IDLE_MIB = 81.3;
const LITE_110_PODS_MIB = 84.8;

const NAMESPACE = 'bench-agent-memory';
/** Idle at least this long before RSS counts as settled. */
const MIN_IDLE_MS = 20_000;
/** Settled: the samples of the last window vary by less than this. */
const WINDOW_MS = 5000;
const STABLE_MIB = 0.5;
const SAMPLE_EVERY_MS = 200;
const MAX_IDLE_MS = 60_000;
const PODS_TIMEOUT_MS = 10 * 60_000;

type Pod = WirePod & KubeObject;

interface SettledRss {
  settled: number;
  peak: number;
  idleMs: number;
  /** From spawn to the first /readyz 200. */
  readyAfterMs: number;
  /** False when RSS was still moving at MAX_IDLE_MS. */
  stable: boolean;
}

export const agentMemorySuite: BenchSuite = {
  name: 'memory',
  description: `the agent's RSS (MiB) on a real node, empty and with ${PODS_ON_NODE} pods, heap flags and Node defaults`,
  inDefaultRun: true,
  async run(context) {
    const cluster = await useRealCluster();
    const node = cluster.nodes[0]!;
    const tunedIdle = await settledRss(context, cluster, node, 'empty node, heap flags', DAEMONSET_HEAP_FLAGS);
    const plainIdle = await settledRss(context, cluster, node, 'empty node, default V8', '');

    await ensureNamespace(cluster.admin, NAMESPACE);
    context.defer(() => deleteTestNamespace(cluster.admin, NAMESPACE, { waitMs: PODS_TIMEOUT_MS }));
    context.log(`${PODS_ON_NODE} pods on ${node.name}`);
    const started = performance.now();
    await runPods(cluster, node);
    const podsUpMs = performance.now() - started;
    const tuned = await settledRss(context, cluster, node, `${PODS_ON_NODE} pods, heap flags`, DAEMONSET_HEAP_FLAGS);
    const plain = await settledRss(context, cluster, node, `${PODS_ON_NODE} pods, default V8`, '');

    const figures: Figure[] = [
      {
        name: 'rss.110pods.heapFlags',
        value: tuned.settled,
        unit: 'MiB',
        note: `${DAEMONSET_HEAP_FLAGS}; ${note(tuned)}`,
      },
      { name: 'rss.110pods.heapFlags.peak', value: tuned.peak, unit: 'MiB' },
      { name: 'rss.110pods.default', value: plain.settled, unit: 'MiB', note: note(plain) },
      { name: 'rss.110pods.default.peak', value: plain.peak, unit: 'MiB' },
      {
        name: 'rss.idle.heapFlags',
        value: tunedIdle.settled,
        unit: 'MiB',
        note: `no pod on the node; ${note(tunedIdle)}`,
      },
      { name: 'rss.idle.default', value: plainIdle.settled, unit: 'MiB', note: note(plainIdle) },
      {
        name: 'rss.110pods.heapFlags/lite',
        value: tuned.settled / LITE_110_PODS_MIB,
        unit: 'x',
        note: `lite cluster: ${LITE_110_PODS_MIB} MiB (pods registered with the API emulator only, not run)`,
      },
      {
        name: 'rss.idle.heapFlags/lite',
        value: tunedIdle.settled / LITE_IDLE_MIB,
        unit: 'x',
        note: `lite cluster: ${LITE_IDLE_MIB} MiB (idle against the API emulator)`,
      },
      {
        name: 'rss.110pods.heapFlags/budget',
        value: tuned.settled / BUDGET_MIB,
        unit: 'x',
        note: `budget ${BUDGET_MIB} MiB`,
      },
      { name: 'ready.110pods.heapFlags', value: tuned.readyAfterMs, unit: 'ms', note: 'spawn to /readyz 200' },
      { name: 'pods.running', value: podsUpMs / 1000, unit: 's', note: `${PODS_ON_NODE} pods created to all Ready` },
    ];
    return figures;
  },
};

/** PODS_ON_NODE pods bound to `node`, each two containers of the pause image and a 200-character annotation. */
async function runPods(cluster: RealCluster, node: NodeLayout): Promise<void> {
  const image = cluster.vars.SANDBOX_IMAGE;
  if (!image) throw new Error('the real cluster env lacks SANDBOX_IMAGE');
  for (let i = 0; i < PODS_ON_NODE; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `rss-pod-${i}`, labels: { app: 'rss' }, annotations: { note: 'x'.repeat(200) } },
      spec: {
        nodeName: node.name,
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'app', image },
          { name: 'side', image },
        ],
      },
    };
    await cluster.admin.create(CoreResources.pods, pod, { namespace: NAMESPACE });
  }
  await waitFor(
    async () => {
      const pods = await cluster.admin.list<Pod>(CoreResources.pods, { namespace: NAMESPACE });
      const failed = pods.items.find((p) => p.status?.phase === 'Failed');
      if (failed) {
        throw new Error(
          `${failed.metadata?.name} failed on ${node.name}: ${failed.status?.reason ?? ''} ${failed.status?.message ?? ''}`,
        );
      }
      const ready = pods.items.filter((p) =>
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length === PODS_ON_NODE;
    },
    { timeoutMs: PODS_TIMEOUT_MS, intervalMs: 2000, message: `${PODS_ON_NODE} pods Ready on ${node.name}` },
  );
}

async function settledRss(
  context: BenchContext,
  cluster: RealCluster,
  node: NodeLayout,
  label: string,
  nodeOptions: string,
): Promise<SettledRss> {
  const spawned = performance.now();
  const { process: agent } = await startAgentOn(cluster, node, { agentEnv: { NODE_OPTIONS: nodeOptions } });
  context.defer(() => agent.stop());
  const readyAfterMs = Math.round(performance.now() - spawned);
  context.log(`${label}: agent ${agent.pid} ready; sampling RSS until it settles`);

  const started = performance.now();
  const samples: Array<{ at: number; mib: number }> = [];
  let peak = 0;
  const sample = (): SettledRss | undefined => {
    if (agent.hasExited) throw new Error(`the agent exited: ${agent.stderr}`);
    const at = performance.now() - started;
    const mib = rssMiB(agent.pid);
    peak = Math.max(peak, mib);
    samples.push({ at, mib });
    const window = samples.filter((s) => s.at >= at - WINDOW_MS).map((s) => s.mib);
    const settled = at >= MIN_IDLE_MS && Math.max(...window) - Math.min(...window) < STABLE_MIB;
    return settled ? { settled: mib, peak, idleMs: Math.round(at), readyAfterMs, stable: true } : undefined;
  };
  let result: SettledRss;
  try {
    result = await waitFor(sample, { timeoutMs: MAX_IDLE_MS, intervalMs: SAMPLE_EVERY_MS, message: 'RSS to settle' });
  } catch (err) {
    if (agent.hasExited) throw err;
    // Still moving after MAX_IDLE_MS: report the last sample and say so.
    const last = samples[samples.length - 1]!;
    result = { settled: last.mib, peak, idleMs: Math.round(last.at), readyAfterMs, stable: false };
  }
  await agent.stop();
  context.log(`${label}: ${result.settled.toFixed(1)} MiB (${note(result)})`);
  return result;
}

function note(rss: SettledRss): string {
  return rss.stable ? `settled after ${rss.idleMs} ms` : `NOT settled after ${rss.idleMs} ms`;
}
