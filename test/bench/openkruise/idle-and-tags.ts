// The first figures of the side-by-side bench, on a node with no pods of the bench: the agent's steady state (CPU
// seconds, API requests per minute as kube-apiserver and the agent count them, RSS at the end of the window) and
// 20 NodeImage tags in one spec write -> all Succeeded, ROUNDS rounds (each a new tag version, the image removed
// first), with the API requests and CPU seconds of the rounds and the RSS after them.
import type { NodeImageSpec, NodeImageStatus } from '../../../src/api/nodeimage.js';
import type { CriClient } from '../../../src/cri/client.js';
import { rssMiB } from '../../component/daemon/agent-process.js';
import type { RealCluster } from '../../support/real-cluster.js';
import type { BenchContext } from '../framework.js';
import type { Pair } from '../side-by-side.js';
import { percentile } from '../stats.js';
import { cpuSeconds, sampleLoad, sleep, type AgentUnderTest } from './agents.js';
import { FLOW_SCHEMA, serverRequests } from './api-requests.js';
import { emptyNodeImage, nodeImageRound } from './nodeimage-round.js';

export const TAGS = 20;
const ROUNDS = 5;
/** After ready, before the steady-state window: start-up work (lists, first syncs, JIT) settles. */
export const SETTLE_MS = 20_000;
const STEADY_MS = 2 * 60_000;
const STEADY_LONG_MS = 10 * 60_000;
/** After the last tag is seen Succeeded: the last events and status writes land before requests are counted. */
const LAND_MS = 2000;

export interface IdleAndTags {
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

export const steadyWindowMs = (context: BenchContext): number => (context.long ? STEADY_LONG_MS : STEADY_MS);

/** The bench's 20 tags of `repository` (imagepuller.ts's pushBenchTags pushes them). */
export const benchTags = (): string[] => Array.from({ length: TAGS }, (_, i) => `t${String(i + 1).padStart(2, '0')}`);

function allAtVersion(status: NodeImageStatus, repository: string, version: number): boolean {
  const tags = status.imageStatuses?.[repository]?.tags ?? [];
  return tags.length === TAGS && tags.every((t) => t.version === version && t.phase === 'Succeeded');
}

export async function measureIdleAndTags(
  context: BenchContext,
  cluster: RealCluster,
  node: string,
  cri: CriClient,
  repository: string,
  agent: AgentUnderTest,
): Promise<IdleAndTags> {
  const { log } = context;
  const client = cluster.admin;
  const label = agent.side;
  await emptyNodeImage(client, node, label);
  log(`${label}: settling ${SETTLE_MS / 1000} s`);
  await sleep(SETTLE_MS);

  const windowMs = steadyWindowMs(context);
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
    const spec: NodeImageSpec = {
      images: {
        [repository]: {
          tags: benchTags().map((tag) => ({
            tag,
            version: round,
            pullPolicy: { timeoutSeconds: 120, backoffLimit: 0 },
          })),
        },
      },
    };
    // the spec is emptied before the counters are read: those requests are not the pulls'
    await emptyNodeImage(client, node, label);
    const server = await serverRequests(cluster);
    const cpu = cpuSeconds(agent.pid);
    const ms = await nodeImageRound(client, cri, node, label, [`${repository}:t01`], spec, (s) =>
      allAtVersion(s, repository, round),
    );
    pull20.push(ms);
    await sleep(LAND_MS);
    pullRequests += (await serverRequests(cluster)) - server;
    pullCpuS += cpuSeconds(agent.pid) - cpu;
    log(`${label}: round ${round}: ${TAGS} tags Succeeded after ${Math.round(ms)} ms`);
  }
  const rssAfterPulls = rssMiB(agent.pid);
  sampleLoad();
  await emptyNodeImage(client, node, label);
  return {
    readyMs: agent.readyMs,
    steadyCpuS,
    steadyRequestsPerMin,
    steadyOwnRequestsPerMin,
    rssIdle,
    pull20,
    pullRequestsPerTag: pullRequests / (TAGS * ROUNDS),
    pullCpuS,
    rssAfterPulls,
  };
}

export function idleAndTagsPairs(
  context: BenchContext,
  ours: IdleAndTags,
  theirs: IdleAndTags,
  parallel: number,
): Pair[] {
  const windowMin = steadyWindowMs(context) / 60_000;
  const samples = (s: IdleAndTags): string => s.pull20.map(Math.round).join(', ');
  return [
    {
      name: 'pull20',
      unit: 'ms',
      ours: percentile(ours.pull20, 50),
      theirs: percentile(theirs.pull20, 50),
      note:
        `${TAGS} tags in one spec write -> all Succeeded, ${parallel} at a time, median of ${ROUNDS}; ` +
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
}
