// The image puller against the local cluster's containerd and an in-process API emulator:
// - 20 tags from the spec write to all Succeeded through the agent, versus the same 20 pulls made directly
//   through CRI with the same parallelism (ratio);
// - spec write → the agent starting PullImage (its 'pulling image' log line), p50/p99 over version bumps;
// - API requests the agent made per tag (the emulator counts requests by User-Agent), and while idle;
// - the agent's RSS (DaemonSet heap flags) after the run.
// Bench content: the busybox test image pushed under 20 tags of bench/busybox with skopeo. All 20 tags are one
// image id, so RemoveImage of any of them removes every tag and the content: both runs start from an empty node.
// The image puller on the real local cluster: the agent inside kd-node-1 (its network and mount namespaces, the
// kruise-daemon ServiceAccount's token, the DaemonSet's heap flags) pulling through that node's containerd from the
// cluster's registry, against kube-apiserver:
// - 20 tags from the spec write to all Succeeded through the agent, versus the same 20 pulls made directly
//   through CRI (the node's containerd socket, from the host) with the same parallelism (ratio);
// - spec write → the agent starting PullImage (its 'pulling image' log line), p50/p99 over version bumps;
// - API requests the agent made per tag (its own kruise_daemon_api_requests_total), and while idle;
// - the agent's RSS after the run.
// Each figure measured before on the API emulator and the host's containerd (docs/image-pull.md) is printed beside
// the new one with the ratio new/old.
// Bench content: the busybox test image pushed under 20 tags of bench/busybox with skopeo. All 20 tags are one
// image id, so RemoveImage of any of them removes every tag and the content: both runs start from an empty node.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NodeImageSpec } from '../../src/api/nodeimage.js';
import { CriClient } from '../../src/cri/client.js';
import { rssMiB, type AgentProcess } from '../component/daemon/agent-process.js';
import {
  agentCounter,
  removeImages,
  setNodeImageSpec,
  waitForStatus,
  watchStatusUntil,
} from '../support/nodeimages.js';
import { startAgentOn, useRealCluster, type RealCluster } from '../support/real-cluster.js';
import { waitFor } from '../support/wait.js';
import { besideRecorded, type BenchContext, type BenchSuite, type Figure } from './framework.js';
import { percentile } from './stats.js';

const run = promisify(execFile);
const TAGS = 20;
const PARALLEL = 2;
const IDLE_WINDOW_MS = 10_000;
const ROUNDS = 5;

/** The figures recorded on the API emulator and the host's containerd (docs/image-pull.md, before the real cluster). */
export const EMULATOR_FIGURES: Readonly<Record<string, number>> = {
  'pull20.direct': 1576,
  'pull20.agent': 1705,
  'pull20.agent/direct': 1.08,
  'pullImage.mean.direct': 139,
  'pullImage.mean.agent': 160,
  'specWrite→pull.p50': 3,
  'specWrite→pull.p99': 86,
  'apiRequests.perTag': 1.2,
  'apiRequests.idlePerMinute': 0,
  'rss.afterRun': 84,
};

interface Bench {
  cluster: RealCluster;
  node: string;
  cri: CriClient;
  agent: AgentProcess;
  url: string;
}

export const imagePullerSuite: BenchSuite = {
  name: 'imagepuller',
  description:
    '20 tags through the agent in a real node vs direct CRI, spec write → PullImage, API requests per tag, RSS',
  inDefaultRun: true,
  async run(context) {
    const cluster = await useRealCluster();
    const node = cluster.nodes[0]!;
    const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
    context.defer(() => cri.close());
    const repository = `${cluster.registry}/bench/busybox`;
    const tags = Array.from({ length: TAGS }, (_, i) => `t${String(i + 1).padStart(2, '0')}`);
    await pushBenchTags(context, cluster, repository, tags);
    const refs = tags.map((t) => `${repository}:${t}`);

    const started = await startAgentOn(cluster, node, { agentArgs: ['--max-parallel-pulls', String(PARALLEL)] });
    context.defer(() => started.process.stop());
    const bench: Bench = { cluster, node: node.name, cri, agent: started.process, url: started.url };
    const client = cluster.admin;
    const spec: NodeImageSpec = {
      images: {
        [repository]: {
          tags: tags.map((tag) => ({ tag, version: 0, pullPolicy: { timeoutSeconds: 120, backoffLimit: 0 } })),
        },
      },
    };
    context.defer(() => setNodeImageSpec(client, node.name, { images: {} }));
    const apiRequests = (): Promise<number> => agentCounter(bench.url, 'kruise_daemon_api_requests_total');

    // the machine is shared: alternate the two ways ROUNDS times and keep the medians
    const direct: number[] = [];
    const viaAgent: number[] = [];
    const pullsDone: number[] = [];
    const requests: number[] = [];
    const directCallMs: number[] = [];
    const criBefore = await criPullTotals(bench.url);
    for (let round = 1; round <= ROUNDS; round++) {
      context.log(`round ${round}: direct CRI, ${TAGS} pulls ${PARALLEL} at a time`);
      await removeImages(cri, refs.slice(0, 1));
      direct.push(await timed(() => pullAll(cri, refs, PARALLEL, directCallMs)));

      context.log(`round ${round}: the agent, ${TAGS} tags in one spec write`);
      await setNodeImageSpec(client, node.name, { images: {} });
      await waitForStatus(client, node.name, (s) => s.desired === 0, {
        message: 'the agent to report the empty spec',
      });
      await removeImages(cri, refs.slice(0, 1));
      const requestsBefore = await apiRequests();
      const logsBefore = bench.agent.logs.length;
      const seen = await watchStatusUntil(client, node.name, (s) => s.succeeded === TAGS);
      const writtenAt = Date.now();
      viaAgent.push(
        await timed(async () => {
          await setNodeImageSpec(client, node.name, spec);
          await seen.reached;
        }),
      );
      const pulled = await waitFor(
        () => {
          const lines = bench.agent.logs.slice(logsBefore).filter((l) => l.msg === 'image pulled');
          return lines.length >= TAGS ? lines : undefined;
        },
        { timeoutMs: 10_000 },
      );
      pullsDone.push(Math.max(...pulled.map((l) => Date.parse(String(l.time)))) - writtenAt);
      // the events of the last tags may still be in flight when the status is seen: let them land
      await new Promise((resolve) => setTimeout(resolve, 1000));
      requests.push((await apiRequests()) - requestsBefore);
    }
    const criAfter = await criPullTotals(bench.url);
    const agentCallMean = ((criAfter.seconds - criBefore.seconds) * 1000) / (criAfter.count - criBefore.count);
    const directCallMean = directCallMs.reduce((a, b) => a + b, 0) / directCallMs.length;
    const directMs = percentile(direct, 50);
    const agentMs = percentile(viaAgent, 50);
    const pullsDoneMs = percentile(pullsDone, 50);
    // the first round: later rounds send fewer events (the recorder's per-object spam filter: burst 25, then 1/5 min)
    const requestsRun = requests[0]!;

    context.log(`idle for ${IDLE_WINDOW_MS} ms: API requests beyond the watch`);
    const idleBefore = await apiRequests();
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
    const idleRequests = (await apiRequests()) - idleBefore;
    const rss = rssMiB(bench.agent.pid);

    const bumps = Math.max(10, Math.round(context.iterations / 4));
    context.log(`spec write → PullImage start, ${bumps} version bumps`);
    const reaction = await reactionTimes(bench, repository, bumps);

    const figures: Figure[] = [
      {
        name: 'pull20.direct',
        value: directMs,
        unit: 'ms',
        note: `${TAGS} tags, ${PARALLEL} at a time, CRI only; median of ${ROUNDS}: ${direct.map(Math.round).join(', ')}`,
      },
      {
        name: 'pull20.agent',
        value: agentMs,
        unit: 'ms',
        note: `spec write → all Succeeded in the status; median of ${ROUNDS}: ${viaAgent.map(Math.round).join(', ')}`,
      },
      { name: 'pull20.agent/direct', value: agentMs / directMs, unit: 'x' },
      {
        name: 'pull20.agent.pullsDone',
        value: pullsDoneMs,
        unit: 'ms',
        note: "spec write → the agent's last 'image pulled' log line",
      },
      {
        name: 'pullImage.mean.direct',
        value: directCallMean,
        unit: 'ms',
        note: 'one CRI PullImage call, 2 at a time',
      },
      {
        name: 'pullImage.mean.agent',
        value: agentCallMean,
        unit: 'ms',
        note: "the agent's own CRI metric (kruise_daemon_cri_request_duration_seconds)",
      },
      { name: 'specWrite→pull.p50', value: percentile(reaction, 50), unit: 'ms', note: `n=${reaction.length}` },
      { name: 'specWrite→pull.p99', value: percentile(reaction, 99), unit: 'ms', note: `n=${reaction.length}` },
      {
        name: 'apiRequests.perTag',
        value: requestsRun / TAGS,
        unit: 'count',
        note:
          `first round: ${requestsRun} requests for ${TAGS} tags (status patches + one event per tag); ` +
          `all rounds: ${requests.join(', ')} (later events spam-filtered)`,
      },
      {
        name: 'apiRequests.idlePerMinute',
        value: (idleRequests * 60_000) / IDLE_WINDOW_MS,
        unit: 'count',
        note: `${idleRequests} in ${IDLE_WINDOW_MS / 1000} s idle, beyond the open watch`,
      },
      { name: 'rss.afterRun', value: rss, unit: 'MiB', note: `${cluster.agentNodeOptions}; budget 100 MiB` },
    ];
    return besideRecorded(figures, EMULATOR_FIGURES, 'the emulator');
  },
};

/** The busybox test image pushed to the cluster's registry under each of `tags` of `repository` (skipped if there). */
export async function pushBenchTags(
  context: BenchContext,
  cluster: RealCluster,
  repository: string,
  tags: readonly string[],
): Promise<void> {
  const source = `docker://${cluster.images.busybox1}`;
  for (const tag of tags) {
    const head = await fetch(`http://${cluster.registry}/v2/bench/busybox/manifests/${tag}`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    if (head.status === 200) continue;
    context.log(`pushing ${repository}:${tag}`);
    await run('skopeo', [
      'copy',
      '--quiet',
      '--src-tls-verify=false',
      '--dest-tls-verify=false',
      source,
      `docker://${repository}:${tag}`,
    ]);
  }
}

async function pullAll(cri: CriClient, refs: readonly string[], parallel: number, callMs: number[]): Promise<void> {
  const queue = [...refs];
  const worker = async (): Promise<void> => {
    for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
      const start = performance.now();
      await cri.pullImage({ image: { image: ref } }, { timeoutMs: 120_000 });
      callMs.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: parallel }, () => worker()));
}

/** Bump the version of one tag `n` times; each time, ms from the spec write to the agent's 'pulling image' log. */
async function reactionTimes(bench: Bench, repository: string, n: number): Promise<number[]> {
  const { agent, node } = bench;
  const client = bench.cluster.admin;
  const samples: number[] = [];
  for (let version = 1; version <= n; version++) {
    const seen = agent.logs.length;
    const writtenAt = Date.now();
    await setNodeImageSpec(client, node, {
      images: {
        [repository]: { tags: [{ tag: 't01', version, pullPolicy: { timeoutSeconds: 60, backoffLimit: 0 } }] },
      },
    });
    const line = await waitFor(() => agent.logs.slice(seen).find((l) => l.msg === 'pulling image'), {
      timeoutMs: 10_000,
      intervalMs: 2,
      message: `the agent to start pulling version ${version}`,
    });
    samples.push(Date.parse(String(line.time)) - writtenAt);
    await waitForStatus(
      client,
      node,
      (s) => s.imageStatuses?.[repository]?.tags[0]?.version === version && s.succeeded === 1,
    );
  }
  return samples;
}

async function criPullTotals(base: string): Promise<{ seconds: number; count: number }> {
  return {
    seconds: await agentCounter(base, 'kruise_daemon_cri_request_duration_seconds_sum', { method: 'PullImage' }),
    count: await agentCounter(base, 'kruise_daemon_cri_request_duration_seconds_count', { method: 'PullImage' }),
  };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
