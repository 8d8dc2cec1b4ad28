// The image puller against the local cluster's containerd and an in-process API emulator:
// - 20 tags from the spec write to all Succeeded through the agent, versus the same 20 pulls made directly
//   through CRI with the same parallelism (ratio);
// - spec write → the agent starting PullImage (its 'pulling image' log line), p50/p99 over version bumps;
// - API requests the agent made per tag (the emulator counts requests by User-Agent), and while idle;
// - the agent's RSS (DaemonSet heap flags) after the run.
// Bench content: the busybox test image pushed under 20 tags of bench/busybox with skopeo. All 20 tags are one
// image id, so RemoveImage of any of them removes every tag and the content: both runs start from an empty node.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { NodeImageSpec, NodeImageStatus } from '../../src/api/nodeimage.js';
import { NODE_IMAGES } from '../../src/daemon/imagepuller/controller.js';
import { DAEMON_USER_AGENT } from '../../src/daemon/main.js';
import { AgentProcess, rssMiB } from '../component/daemon/agent-process.js';
import {
  agentCounter,
  removeImages,
  setNodeImageSpec,
  startImagePullerEnv,
  startPuller,
  waitForStatus,
  type ImagePullerEnv,
  type NodeImageObject,
} from '../support/imagepuller-env.js';
import { waitFor } from '../support/wait.js';
import { DAEMONSET_HEAP_FLAGS } from './agent-memory.js';
import type { BenchContext, BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

const run = promisify(execFile);
const TAGS = 20;
const PARALLEL = 2;
const NODE = 'bench-imagepuller';
const IDLE_WINDOW_MS = 10_000;
const ROUNDS = 5;

export const imagePullerSuite: BenchSuite = {
  name: 'imagepuller',
  description: '20 tags through the agent vs direct CRI, spec write → PullImage, API requests per tag, RSS',
  inDefaultRun: true,
  async run(context) {
    const env = await startImagePullerEnv();
    context.defer(() => env.close());
    const repository = `${env.cluster.registry}/bench/busybox`;
    const tags = Array.from({ length: TAGS }, (_, i) => `t${String(i + 1).padStart(2, '0')}`);
    await pushBenchTags(context, env, repository, tags);
    const refs = tags.map((t) => `${repository}:${t}`);

    const agent = startPuller(env, NODE, {
      args: ['--max-parallel-pulls', String(PARALLEL)],
      env: { NODE_OPTIONS: DAEMONSET_HEAP_FLAGS },
    });
    context.defer(() => agent.stop());
    await agent.baseUrl();
    const spec: NodeImageSpec = {
      images: {
        [repository]: {
          tags: tags.map((tag) => ({ tag, version: 0, pullPolicy: { timeoutSeconds: 120, backoffLimit: 0 } })),
        },
      },
    };

    // the machine is shared: alternate the two ways ROUNDS times and keep the medians
    const direct: number[] = [];
    const viaAgent: number[] = [];
    const pullsDone: number[] = [];
    const requests: number[] = [];
    const directCallMs: number[] = [];
    const base = await agent.baseUrl();
    const criBefore = await criPullTotals(base);
    for (let round = 1; round <= ROUNDS; round++) {
      context.log(`round ${round}: direct CRI, ${TAGS} pulls ${PARALLEL} at a time`);
      await removeImages(env.cri, refs.slice(0, 1));
      direct.push(await timed(() => pullAll(env, refs, PARALLEL, directCallMs)));

      context.log(`round ${round}: the agent, ${TAGS} tags in one spec write`);
      await setNodeImageSpec(env.client, NODE, { images: {} });
      await waitForStatus(env.client, NODE, (s) => s.desired === 0, { message: 'the agent to report the empty spec' });
      await removeImages(env.cri, refs.slice(0, 1));
      const requestsBefore = env.api.requestCount({ userAgent: DAEMON_USER_AGENT });
      const logsBefore = agent.logs.length;
      const writtenAt = Date.now();
      viaAgent.push(
        await timed(async () => {
          const seen = watchUntil(env, (s) => s.succeeded === TAGS);
          await setNodeImageSpec(env.client, NODE, spec);
          await seen;
        }),
      );
      const pulled = await waitFor(
        () => {
          const lines = agent.logs.slice(logsBefore).filter((l) => l.msg === 'image pulled');
          return lines.length >= TAGS ? lines : undefined;
        },
        { timeoutMs: 10_000 },
      );
      pullsDone.push(Math.max(...pulled.map((l) => Date.parse(String(l.time)))) - writtenAt);
      // the events of the last tags may still be in flight when the status is seen: let them land
      await new Promise((resolve) => setTimeout(resolve, 1000));
      requests.push(env.api.requestCount({ userAgent: DAEMON_USER_AGENT }) - requestsBefore);
    }
    const criAfter = await criPullTotals(base);
    const agentCallMean = ((criAfter.seconds - criBefore.seconds) * 1000) / (criAfter.count - criBefore.count);
    const directCallMean = directCallMs.reduce((a, b) => a + b, 0) / directCallMs.length;
    const directMs = percentile(direct, 50);
    const agentMs = percentile(viaAgent, 50);
    const pullsDoneMs = percentile(pullsDone, 50);
    // the first round: later rounds send fewer events (the recorder's per-object spam filter: burst 25, then 1/5 min)
    const requestsRun = requests[0]!;

    context.log(`idle for ${IDLE_WINDOW_MS} ms: API requests beyond the watch`);
    const idleBefore = env.api.requestCount({ userAgent: DAEMON_USER_AGENT });
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
    const idleRequests = env.api.requestCount({ userAgent: DAEMON_USER_AGENT }) - idleBefore;
    const rss = rssMiB(agent.pid);

    const bumps = Math.max(10, Math.round(context.iterations / 4));
    context.log(`spec write → PullImage start, ${bumps} version bumps`);
    const reaction = await reactionTimes(env, agent, repository, bumps);

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
      { name: 'rss.afterRun', value: rss, unit: 'MiB', note: `${DAEMONSET_HEAP_FLAGS}; budget 100 MiB` },
    ];
    return figures;
  },
};

async function pushBenchTags(
  context: BenchContext,
  env: ImagePullerEnv,
  repository: string,
  tags: readonly string[],
): Promise<void> {
  const source = `docker://${env.cluster.images.busybox1}`;
  for (const tag of tags) {
    const head = await fetch(`http://${env.cluster.registry}/v2/bench/busybox/manifests/${tag}`, {
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

async function pullAll(
  env: ImagePullerEnv,
  refs: readonly string[],
  parallel: number,
  callMs: number[],
): Promise<void> {
  const queue = [...refs];
  const worker = async (): Promise<void> => {
    for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
      const start = performance.now();
      await env.cri.pullImage({ image: { image: ref } }, { timeoutMs: 120_000 });
      callMs.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: parallel }, () => worker()));
}

/** Bump the version of one tag `n` times; each time, ms from the spec write to the agent's 'pulling image' log. */
async function reactionTimes(
  env: ImagePullerEnv,
  agent: AgentProcess,
  repository: string,
  n: number,
): Promise<number[]> {
  const samples: number[] = [];
  for (let version = 1; version <= n; version++) {
    const seen = agent.logs.length;
    const writtenAt = Date.now();
    await setNodeImageSpec(env.client, NODE, {
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
      env.client,
      NODE,
      (s) => s.imageStatuses?.[repository]?.tags[0]?.version === version && s.succeeded === 1,
    );
  }
  return samples;
}

/**
 * Resolves when a watch on the NodeImage shows a status that satisfies `check` (event-driven, so the bench adds no
 * polling load while it measures).
 */
async function watchUntil(env: ImagePullerEnv, check: (status: NodeImageStatus) => boolean): Promise<void> {
  const current = await env.client.get<NodeImageObject>(NODE_IMAGES, NODE);
  const stream = await env.client.watch<NodeImageObject>(NODE_IMAGES, {
    fieldSelector: `metadata.name=${NODE}`,
    resourceVersion: current.metadata.resourceVersion,
    timeoutSeconds: 120,
  });
  return (async () => {
    try {
      for await (const event of stream) {
        if (event.type !== 'BOOKMARK' && event.object.status && check(event.object.status)) return;
      }
      throw new Error('the NodeImage watch ended before the status was reached');
    } finally {
      stream.close();
    }
  })();
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
