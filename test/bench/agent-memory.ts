// The agent's resident memory when idle: the real binary against the local cluster's runtime, sampled from
// /proc/PID/status once /healthz answers and RSS has settled; once with Node's defaults and once with the
// DaemonSet's V8 heap flags.
import { daemonSetNodeOptions } from '../cluster/deployed-agent.js';
import { AgentProcess, httpGet, rssMiB } from '../component/daemon/agent-process.js';
import { useCluster } from '../support/cluster.js';
import { startEmulatorWithCrds } from '../support/emulator-with-crds.js';
import { waitFor } from '../support/wait.js';
import type { BenchContext, BenchSuite, Figure } from './framework.js';

/** NODE_OPTIONS of deploy/base/daemon/daemonset.yaml (read from it). */
export const DAEMONSET_HEAP_FLAGS = daemonSetNodeOptions();

/** Idle at least this long before RSS counts as settled. */
const MIN_IDLE_MS = 4000;
/** Settled: the samples of the last window vary by less than this. */
const WINDOW_MS = 2000;
const STABLE_MIB = 0.5;
const SAMPLE_EVERY_MS = 200;
const MAX_IDLE_MS = 30_000;

interface IdleRss {
  settled: number;
  peak: number;
  idleMs: number;
  /** From spawn to the first /healthz 200. */
  healthyAfterMs: number;
  /** False when RSS was still moving at MAX_IDLE_MS. */
  stable: boolean;
}

export const agentMemorySuite: BenchSuite = {
  name: 'memory',
  description: "the agent's idle RSS (MiB), Node defaults and the DaemonSet's heap flags",
  inDefaultRun: true,
  async run(context) {
    const cluster = await useCluster();
    // the agent is healthy once its NodeImage informer has synced: an API emulator with the CRDs
    const emulator = await startEmulatorWithCrds();
    context.defer(() => emulator.close());
    const env = {
      NODE_NAME: 'bench-node',
      RUNTIME_SOCKET: cluster.runtimeSocket,
      KUBECONFIG: emulator.kubeconfig,
      LOG_LEVEL: 'info',
    };
    const plain = await idleRss(context, 'default V8', env);
    const tuned = await idleRss(context, 'heap flags', { ...env, NODE_OPTIONS: DAEMONSET_HEAP_FLAGS });
    const budget = 100;
    const figures: Figure[] = [
      { name: 'rss.idle.default', value: plain.settled, unit: 'MiB', note: settleNote(plain) },
      { name: 'rss.peakWhileIdle.default', value: plain.peak, unit: 'MiB' },
      {
        name: 'rss.idle.heapFlags',
        value: tuned.settled,
        unit: 'MiB',
        note: `${DAEMONSET_HEAP_FLAGS}; ${settleNote(tuned)}`,
      },
      { name: 'rss.peakWhileIdle.heapFlags', value: tuned.peak, unit: 'MiB' },
      { name: 'startup.healthy.default', value: plain.healthyAfterMs, unit: 'ms', note: 'spawn to /healthz 200' },
      { name: 'startup.healthy.heapFlags', value: tuned.healthyAfterMs, unit: 'ms' },
      { name: 'rss.heapFlags/default', value: tuned.settled / plain.settled, unit: 'x' },
      { name: 'rss.heapFlags/budget', value: tuned.settled / budget, unit: 'x', note: `budget ${budget} MiB` },
    ];
    return figures;
  },
};

async function idleRss(context: BenchContext, label: string, env: Record<string, string>): Promise<IdleRss> {
  const spawned = performance.now();
  const agent = new AgentProcess({ env });
  context.defer(() => agent.stop());
  const base = await agent.baseUrl();
  await waitFor(async () => (await httpGet(`${base}/healthz`)).status === 200, {
    timeoutMs: 30_000,
    message: `/healthz of the agent (${label})`,
  });
  const healthyAfterMs = Math.round(performance.now() - spawned);
  context.log(`${label}: agent ${agent.pid} healthy; sampling RSS until it settles`);

  const started = performance.now();
  const samples: Array<{ at: number; mib: number }> = [];
  let peak = 0;
  const sample = (): IdleRss | undefined => {
    if (agent.hasExited) throw new Error(`the agent exited while idle: ${agent.stderr}`);
    const at = performance.now() - started;
    const mib = rssMiB(agent.pid);
    peak = Math.max(peak, mib);
    samples.push({ at, mib });
    const window = samples.filter((s) => s.at >= at - WINDOW_MS).map((s) => s.mib);
    const settled = at >= MIN_IDLE_MS && Math.max(...window) - Math.min(...window) < STABLE_MIB;
    return settled ? { settled: mib, peak, idleMs: Math.round(at), healthyAfterMs, stable: true } : undefined;
  };
  let result: IdleRss;
  try {
    result = await waitFor(sample, { timeoutMs: MAX_IDLE_MS, intervalMs: SAMPLE_EVERY_MS, message: 'RSS to settle' });
  } catch (err) {
    if (agent.hasExited) throw err;
    // Still moving after MAX_IDLE_MS: report the last sample and say so.
    const last = samples[samples.length - 1]!;
    result = { settled: last.mib, peak, idleMs: Math.round(last.at), healthyAfterMs, stable: false };
  }
  await agent.stop();
  return result;
}

function settleNote(rss: IdleRss): string {
  return rss.stable ? `settled after ${rss.idleMs} ms idle` : `NOT settled after ${rss.idleMs} ms`;
}
