// `npm run bench -- openkruise`: our agent beside OpenKruise's own kruise-daemon (v1.9.1, built here by
// test/cluster/k8s/build.sh openkruise), the same workload on the same node of the real local cluster, one agent at
// a time (ours, then OpenKruise's; never both on the node at once). For each agent:
// - start -> ready (our /readyz, its /healthz: every informer synced);
// - steady state, no work, over a window (2 min; `--long`: 10 min, as issue 18 asks): CPU seconds (utime + stime of
//   the process, /proc/PID/stat), API requests per minute as kube-apiserver counts them (a FlowSchema matching the
//   kruise-daemon ServiceAccount, which both agents use, and its apiserver_flowcontrol_dispatched_requests_total;
//   apiserver_request_total has no client label) and as the agent counts them itself; RSS at the end of the window;
// - NodeImage: 20 tags of the local registry written in one spec write -> all Succeeded in the status, ROUNDS
//   rounds (images removed through CRI and the spec emptied before each; each round a new tag version), median;
//   the API requests (server view) and CPU seconds of the rounds, the RSS after them.
// Both pull 2 at a time (our --max-parallel-pulls 2; its --max-workers-for-pull-image=2, as its own install runs it).
// Each figure is printed for both and as ours/openkruise, then as a Markdown table (docs/openkruise-side-by-side.md).
// Bench content: imagepuller.ts's 20 tags of bench/busybox (one image id: removing one tag removes them all).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { NODE_IMAGES, type NodeImageSpec, type NodeImageStatus } from '../../src/api/nodeimage.js';
import { CriClient } from '../../src/cri/client.js';
import type { NodeLayout } from '../cluster/k8s/layout.js';
import { kubectl } from '../cluster/k8s/system.js';
import { OpenKruiseDaemonProcess } from '../cluster/openkruise/daemon-process.js';
import { daemonApiObjects, openKruiseBuild, swapInObjects } from '../cluster/openkruise/openkruise.js';
import { rssMiB } from '../component/daemon/agent-process.js';
import {
  agentCounter,
  getNodeImage,
  removeImages,
  setNodeImageSpec,
  waitForStatus,
  watchStatusUntil,
} from '../support/nodeimages.js';
import { agentKubeconfigOf, startAgentOn, useRealCluster, type RealCluster } from '../support/real-cluster.js';
import { benchFlowSchema, dispatchedRequests } from './flow-schema.js';
import type { BenchContext, BenchSuite, Figure } from './framework.js';
import { pushBenchTags } from './imagepuller.js';
import { cpuTicksOfStat, markdownTable, sideBySide, type Pair } from './side-by-side.js';
import { percentile } from './stats.js';

const TAGS = 20;
const PARALLEL = 2;
const ROUNDS = 5;
/** After ready, before the steady-state window: start-up work (lists, first syncs, JIT) settles. */
const SETTLE_MS = 20_000;
const STEADY_MS = 2 * 60_000;
const STEADY_LONG_MS = 10 * 60_000;
/** After the last tag is seen Succeeded: the last events and status writes land before requests are counted. */
const LAND_MS = 2000;

/** Matches every request of the kruise-daemon ServiceAccount, so the API server counts them apart. */
const FLOW_SCHEMA = 'kd-bench-kruise-daemon';

interface AgentUnderTest {
  pid: number;
  /** The agent's own count of its API requests (ours: kruise_daemon_api_requests_total; its: client-go's). */
  ownRequests(): Promise<number>;
  stop(): Promise<unknown>;
}

interface SideFigures {
  readyMs: number;
  steadyCpuS: number;
  steadyRequestsPerMin: number;
  steadyOwnRequestsPerMin: number;
  rssIdle: number;
  pull20: number[];
  pullRequestsPerTag: number;
  pullCpuS: number;
  rssAfterPulls: number;
}

/** The machine's 1-minute load average, sampled at each phase (printed with the table: the machine is shared). */
const loads: number[] = [];
const sampleLoad = (): void => void loads.push(loadavg()[0]!);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpuSeconds(pid: number): number {
  return cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8')) / clockTicks;
}

/** Requests of the kruise-daemon ServiceAccount the API server has dispatched (APF's counter of our FlowSchema). */
function serverRequests(cluster: RealCluster): Promise<number> {
  return dispatchedRequests(cluster, FLOW_SCHEMA);
}

/** The agent has seen the empty spec: nothing desired, no image status left. */
function emptyStatus(status: NodeImageStatus): boolean {
  return status.desired === 0 && Object.keys(status.imageStatuses ?? {}).length === 0;
}

function allAtVersion(status: NodeImageStatus, repository: string, version: number): boolean {
  const tags = status.imageStatuses?.[repository]?.tags ?? [];
  return tags.length === TAGS && tags.every((t) => t.version === version && t.phase === 'Succeeded');
}

/** Run one agent on `node` through the whole workload; stopped at the end (also on failure). */
async function measure(
  context: BenchContext,
  cluster: RealCluster,
  node: NodeLayout,
  cri: CriClient,
  repository: string,
  label: string,
  start: () => Promise<AgentUnderTest>,
): Promise<SideFigures> {
  const { log } = context;
  const client = cluster.admin;
  const refs = [`${repository}:t01`];
  await setNodeImageSpec(client, node.name, { images: {} });
  await removeImages(cri, refs);

  const spawned = performance.now();
  const agent = await start();
  context.defer(() => agent.stop());
  const readyMs = performance.now() - spawned;
  try {
    await waitForStatus(client, node.name, emptyStatus, {
      message: `${label}: the empty spec in the status`,
    });
    log(`${label}: ready after ${Math.round(readyMs)} ms (pid ${agent.pid}); settling ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);

    const windowMs = context.long ? STEADY_LONG_MS : STEADY_MS;
    log(`${label}: steady state for ${windowMs / 60_000} min (CPU, API requests)`);
    const server0 = await serverRequests(cluster);
    const own0 = await agent.ownRequests();
    const cpu0 = cpuSeconds(agent.pid);
    const t0 = performance.now();
    await sleep(windowMs);
    const minutes = (performance.now() - t0) / 60_000;
    const steadyCpuS = cpuSeconds(agent.pid) - cpu0;
    const steadyRequestsPerMin = ((await serverRequests(cluster)) - server0) / minutes;
    const steadyOwnRequestsPerMin = ((await agent.ownRequests()) - own0) / minutes;
    const rssIdle = rssMiB(agent.pid);
    sampleLoad();

    const pull20: number[] = [];
    let pullRequests = 0;
    let pullCpuS = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      await setNodeImageSpec(client, node.name, { images: {} });
      await waitForStatus(client, node.name, emptyStatus, {
        message: `${label}: the empty spec in the status`,
      });
      await removeImages(cri, refs);
      const spec: NodeImageSpec = {
        images: {
          [repository]: {
            tags: Array.from({ length: TAGS }, (_, i) => ({
              tag: `t${String(i + 1).padStart(2, '0')}`,
              version: round,
              pullPolicy: { timeoutSeconds: 120, backoffLimit: 0 },
            })),
          },
        },
      };
      const server = await serverRequests(cluster);
      const cpu = cpuSeconds(agent.pid);
      const seen = await watchStatusUntil(client, node.name, (s) => allAtVersion(s, repository, round));
      const written = performance.now();
      await setNodeImageSpec(client, node.name, spec);
      await seen.reached;
      pull20.push(performance.now() - written);
      await sleep(LAND_MS);
      pullRequests += (await serverRequests(cluster)) - server;
      pullCpuS += cpuSeconds(agent.pid) - cpu;
      log(`${label}: round ${round}: ${TAGS} tags Succeeded after ${Math.round(pull20[pull20.length - 1]!)} ms`);
    }
    const rssAfterPulls = rssMiB(agent.pid);
    sampleLoad();
    await setNodeImageSpec(client, node.name, { images: {} });
    return {
      readyMs,
      steadyCpuS,
      steadyRequestsPerMin,
      steadyOwnRequestsPerMin,
      rssIdle,
      pull20,
      pullRequestsPerTag: pullRequests / (TAGS * ROUNDS),
      pullCpuS,
      rssAfterPulls,
    };
  } finally {
    await agent.stop();
  }
}

export const openKruiseSuite: BenchSuite = {
  name: 'openkruise',
  description:
    "ours vs OpenKruise's kruise-daemon on one real node: 20 NodeImage tags, RSS, CPU and API requests at steady state",
  inDefaultRun: false,
  async run(context) {
    const { log } = context;
    loads.length = 0;
    const build = await openKruiseBuild(log);
    log('the real cluster (REAL_CLUSTER_DIR)');
    const cluster = await useRealCluster();
    const node = cluster.nodes[0]!;
    const client = cluster.admin;
    const cri = new CriClient({ socket: node.hostPaths.containerdSocket });
    context.defer(() => cri.close());

    const repository = `${cluster.registry}/bench/busybox`;
    const tags = Array.from({ length: TAGS }, (_, i) => `t${String(i + 1).padStart(2, '0')}`);
    await pushBenchTags(context, cluster, repository, tags);

    const daemonAccount = { name: 'kruise-daemon', namespace: 'kruise-system' };
    const schema = benchFlowSchema(
      FLOW_SCHEMA,
      [{ kind: 'ServiceAccount', serviceAccount: daemonAccount }],
      'workload-low',
    );
    const applied = kubectl(cluster.layout, ['apply', '-f', '-'], JSON.stringify(schema));
    if (!applied.ok) throw new Error(`FlowSchema ${FLOW_SCHEMA}: ${applied.out}`);
    context.defer(() => kubectl(cluster.layout, ['delete', '--ignore-not-found', 'flowschema', FLOW_SCHEMA]));
    const nodeImageBefore = await getNodeImage(client, node.name);
    context.defer(async () => {
      if (!nodeImageBefore) await client.delete(NODE_IMAGES, node.name).catch(() => undefined);
    });

    log(`ours on ${node.name}`);
    const ours = await measure(context, cluster, node, cri, repository, 'ours', async () => {
      const agent = await startAgentOn(cluster, node, { agentArgs: ['--max-parallel-pulls', String(PARALLEL)] });
      return {
        pid: agent.process.pid,
        ownRequests: () => agentCounter(agent.url, 'kruise_daemon_api_requests_total'),
        stop: () => agent.process.stop(),
      };
    });

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
    let theirs: SideFigures;
    try {
      log(`OpenKruise's kruise-daemon on ${node.name}`);
      theirs = await measure(context, cluster, node, cri, repository, 'openkruise', async () => {
        const daemon = await OpenKruiseDaemonProcess.startHealthy({
          binary: build.daemon,
          node,
          kubeconfig: agentKubeconfigOf(cluster, node),
          logFile: join(cluster.layout.logDir, `openkruise-daemon-${node.name}.log`),
          extraArgs: [`--max-workers-for-pull-image=${PARALLEL}`],
        });
        return {
          pid: daemon.pid,
          ownRequests: () => agentCounter(daemon.url, 'rest_client_requests_total'),
          stop: () => daemon.stop(),
        };
      });
    } finally {
      restore();
    }

    const windowMin = (context.long ? STEADY_LONG_MS : STEADY_MS) / 60_000;
    const median = (samples: number[]): number => percentile(samples, 50);
    const samples = (s: SideFigures): string => s.pull20.map(Math.round).join(', ');
    const pairs: Pair[] = [
      {
        name: 'pull20',
        unit: 'ms',
        ours: median(ours.pull20),
        theirs: median(theirs.pull20),
        note:
          `${TAGS} tags in one spec write -> all Succeeded, ${PARALLEL} at a time, median of ${ROUNDS}; ` +
          `ours ${samples(ours)}; OpenKruise ${samples(theirs)}`,
      },
      {
        name: 'apiRequests.perTag',
        unit: 'count',
        ours: ours.pullRequestsPerTag,
        theirs: theirs.pullRequestsPerTag,
        note: `kube-apiserver's count (FlowSchema ${FLOW_SCHEMA}), ${ROUNDS} rounds`,
      },
      { name: 'cpu.pulls', unit: 's', ours: ours.pullCpuS, theirs: theirs.pullCpuS, note: `${ROUNDS} rounds` },
      {
        name: 'rss.idle',
        unit: 'MiB',
        ours: ours.rssIdle,
        theirs: theirs.rssIdle,
        note: `end of the steady state (${windowMin} min)`,
      },
      { name: 'rss.afterPulls', unit: 'MiB', ours: ours.rssAfterPulls, theirs: theirs.rssAfterPulls },
      {
        name: 'cpu.steady',
        unit: 's',
        ours: ours.steadyCpuS,
        theirs: theirs.steadyCpuS,
        note: `utime + stime over ${windowMin} min of steady state`,
      },
      {
        name: 'apiRequests.perMinute',
        unit: 'count',
        ours: ours.steadyRequestsPerMin,
        theirs: theirs.steadyRequestsPerMin,
        note: `kube-apiserver's count (APF dispatched, FlowSchema ${FLOW_SCHEMA}), steady state`,
      },
      {
        name: 'apiRequests.perMinute.own',
        unit: 'count',
        ours: ours.steadyOwnRequestsPerMin,
        theirs: theirs.steadyOwnRequestsPerMin,
        note: "the agent's own counter (ours kruise_daemon_api_requests_total, its rest_client_requests_total)",
      },
      {
        name: 'ready',
        unit: 'ms',
        ours: ours.readyMs,
        theirs: theirs.readyMs,
        note: 'spawn -> our /readyz 200, its /healthz 200',
      },
    ];
    const load = `load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}`;
    log(`side by side on ${node.name} (${windowMin} min steady state; ${load}):\n${markdownTable(pairs)}`);
    const figures: Figure[] = pairs.flatMap(sideBySide);
    figures.push({ name: 'machine.load1.max', value: Math.max(...loads), unit: 'load', note: load });
    return figures;
  },
};
