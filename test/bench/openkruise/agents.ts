// The two agents of the side-by-side bench on one node, one at a time: ours (startAgentOn, as deployed, with our API
// objects) and OpenKruise's kruise-daemon (OpenKruiseDaemonProcess, with its own API objects swapped in for the time
// it runs and ours put back after, then checked: our CRDs must be the ones served when ours runs).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { kubectl } from '../../cluster/k8s/system.js';
import { OpenKruiseDaemonProcess } from '../../cluster/openkruise/daemon-process.js';
import {
  daemonApiObjects,
  DAEMON_API_OBJECTS,
  swapInObjects,
  type OpenKruiseBuild,
} from '../../cluster/openkruise/openkruise.js';
import { agentCounter } from '../../support/nodeimages.js';
import { agentKubeconfigOf, startAgentOn, type RealCluster } from '../../support/real-cluster.js';
import type { BenchContext } from '../framework.js';
import { cpuTicksOfStat } from '../side-by-side.js';

/** Both agents pull 2 at a time (our --max-parallel-pulls 2; its --max-workers-for-pull-image=2, as its install). */
export const PARALLEL_PULLS = 2;

export type Side = 'ours' | 'openkruise';

export interface AgentUnderTest {
  side: Side;
  pid: number;
  /** Spawn -> our /readyz 200, its /healthz 200 (every informer synced). */
  readyMs: number;
  /** The agent's own count of its API requests (ours: kruise_daemon_api_requests_total; its: client-go's). */
  ownRequests(): Promise<number>;
  /** The duration of its last image pull as it logs it (ours: `image pulled` ms; its: `Successfully pull image` cost). */
  lastPullMs(): number | undefined;
  /** Pulls it paused so kubelet's pull went first, so far (ours logs each; OpenKruise's daemon never pauses one). */
  pausedPulls(): number;
  stop(): Promise<unknown>;
}

/** The machine's 1-minute load average, sampled at each phase (printed with the table: the machine is shared). */
export const loads: number[] = [];
export const sampleLoad = (): void => void loads.push(loadavg()[0]!);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export function cpuSeconds(pid: number): number {
  return cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8')) / clockTicks;
}

/** A Go duration as time.Duration prints it (`320.28ms`, `1.5s`, `1m2.5s`), in ms; undefined if not one. */
export function goDurationMs(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const parts = [...text.matchAll(/([\d.]+)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
}

async function startOurs(cluster: RealCluster, node: NodeLayout): Promise<AgentUnderTest> {
  const spawned = performance.now();
  const agent = await startAgentOn(cluster, node, { agentArgs: ['--max-parallel-pulls', String(PARALLEL_PULLS)] });
  return {
    side: 'ours',
    pid: agent.process.pid,
    readyMs: performance.now() - spawned,
    ownRequests: () => agentCounter(agent.url, 'kruise_daemon_api_requests_total'),
    lastPullMs: () => {
      const ms = agent.process.logs.findLast((l) => l.msg === 'image pulled')?.ms;
      return typeof ms === 'number' ? ms : undefined;
    },
    pausedPulls: () => agent.process.logs.filter((l) => String(l.msg).startsWith('pull paused for kubelet')).length,
    stop: () => agent.process.stop(),
  };
}

async function startOpenKruise(
  cluster: RealCluster,
  node: NodeLayout,
  build: OpenKruiseBuild,
): Promise<AgentUnderTest> {
  const spawned = performance.now();
  const daemon = await OpenKruiseDaemonProcess.startHealthy({
    binary: build.daemon,
    node,
    kubeconfig: agentKubeconfigOf(cluster, node),
    logFile: join(cluster.layout.logDir, `openkruise-daemon-${node.name}.log`),
    extraArgs: [`--max-workers-for-pull-image=${PARALLEL_PULLS}`],
  });
  return {
    side: 'openkruise',
    pid: daemon.pid,
    readyMs: performance.now() - spawned,
    ownRequests: () => agentCounter(daemon.url, 'rest_client_requests_total'),
    lastPullMs: () => {
      const line = daemon.log().findLast((l) => l.includes('"Successfully pull image"'));
      return line === undefined ? undefined : goDurationMs(/cost="([^"]+)"/.exec(line)?.[1] ?? '');
    },
    pausedPulls: () => 0,
    stop: () => daemon.stop(),
  };
}

/** The served versions and schema of the CRDs both agents read, as one string: ours must be back after a swap. */
function crdFingerprint(cluster: RealCluster): string {
  const names = DAEMON_API_OBJECTS.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `crd/${o.name}`);
  const got = kubectl(cluster.layout, ['get', ...names, '-o', 'json']);
  if (!got.ok) throw new Error(`kubectl get ${names.join(' ')}: ${got.out}`);
  const list = JSON.parse(got.out) as { items: { spec?: { versions?: unknown } }[] };
  return JSON.stringify(list.items.map((crd) => crd.spec?.versions));
}

let ourCrds: string | undefined;

/** Throws unless the CRDs served now are the ones ours ran with the first time (not OpenKruise's). */
function checkOurCrds(cluster: RealCluster): void {
  const now = crdFingerprint(cluster);
  ourCrds ??= now;
  if (now !== ourCrds) throw new Error("our CRDs are not the ones served: OpenKruise's were not replaced by ours");
}

/**
 * Run `body` with ours on `node`, then with OpenKruise's kruise-daemon (its API objects in place of ours meanwhile).
 * Each agent is stopped when its body ends, also on failure.
 */
export async function eachAgent<T>(
  context: BenchContext,
  cluster: RealCluster,
  node: NodeLayout,
  build: OpenKruiseBuild,
  body: (agent: AgentUnderTest) => Promise<T>,
): Promise<{ ours: T; theirs: T }> {
  const { log } = context;
  const run = async (agent: AgentUnderTest): Promise<T> => {
    context.defer(() => agent.stop());
    log(`${agent.side}: ready after ${Math.round(agent.readyMs)} ms (pid ${agent.pid})`);
    try {
      return await body(agent);
    } finally {
      await agent.stop();
    }
  };
  checkOurCrds(cluster);
  log(`ours on ${node.name}`);
  const ours = await run(await startOurs(cluster, node));

  log(`OpenKruise ${build.version}'s API objects for its daemon (ours are put back after)`);
  let restored = false;
  const restoreOurs = swapInObjects(cluster.layout, daemonApiObjects(cluster.layout, build));
  const restore = (): void => {
    if (restored) return;
    restored = true;
    log('putting our API objects back');
    restoreOurs();
  };
  context.defer(restore);
  let theirs: T;
  try {
    log(`OpenKruise's kruise-daemon on ${node.name}`);
    theirs = await run(await startOpenKruise(cluster, node, build));
  } finally {
    restore();
  }
  checkOurCrds(cluster);
  return { ours, theirs };
}
