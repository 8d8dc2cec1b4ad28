// Container launch priority on the real local cluster (kube-apiserver calling kruise-controller's pod webhook, the
// real kubelet of the first node running the pods, the agent inside that node; test/e2e/launchpriority/stack.ts),
// each figure beside the one recorded on kubelet-lite and the ratio real / kubelet-lite:
// - release: from the higher-priority container ready (CRI started_at; no probes, so running = ready) to the next
//   barrier key seen on a ConfigMap watch, p50/p99 over 100 pods (3 levels), one pod at a time and 10 at a time;
// - start: pod created -> every container ready, a 3-level pod (10, 0, -5) versus the same pod without priorities;
// - the same probed pod released the way OpenKruise's central controller does, on the second node (no agent);
// - steady state: the agent's API requests (its own kruise_daemon_api_requests_total) in the 10 s after every pod
//   completed (should be 0).
import { CoreResources } from '../../src/kube/resource.js';
import type { WatchStream } from '../../src/kube/watch-stream.js';
import {
  allReady,
  deletePods,
  podManifest,
  runtimeStartTimes,
  startLaunchStack,
  type ConfigMapObject,
  type ContainerDef,
  type LaunchStack,
  type PodObject,
} from '../e2e/launchpriority/stack.js';
import { agentCounter } from '../support/nodeimages.js';
import { besideRecorded, type BenchSuite, type Figure } from './framework.js';
import { p50p99, percentile } from './stats.js';

const RELEASE_PODS = 100;
const WAVE = 10;
const START_RUNS = 10;
const CONFIGMAP_ONLY_RUNS = 5;
const LEVELS: ContainerDef[] = [
  { name: 'top', priority: '10' },
  { name: 'middle', priority: '0' },
  { name: 'bottom', priority: '-5' },
];
const PLAIN: ContainerDef[] = LEVELS.map((c) => ({ name: c.name }));
/** The same levels, the upper two with a readiness probe: readiness then reaches the releaser through the status. */
const PROBED: ContainerDef[] = LEVELS.map((c) => ({ ...c, probed: c.name !== 'bottom' }));

/** Calls back for every event of a watch until closed. */
function follow<T extends PodObject | ConfigMapObject>(stream: WatchStream<T>, onObject: (o: T) => void): void {
  void (async () => {
    for await (const event of stream) if (event.type !== 'DELETED') onObject(event.object);
  })().catch(() => undefined);
}

/**
 * The same figures measured on kubelet-lite (API emulator with the webhook handler in process, kubelet-lite with
 * kubelet's timers on the host's containerd, the agent as a host process), 2026-11-22 (docs/launch-priority.md).
 */
export const KUBELET_LITE_FIGURES: Readonly<Record<string, number>> = {
  'release.sequential.p50': 31,
  'release.sequential.p99': 66,
  'release.burst.p50': 83,
  'release.burst.p99': 222,
  'start.3levels.p50': 591,
  'start.noPriorities.p50': 466,
  'start.probed3levels.agent.p50': 1600,
  'start.probed3levels.configMapOnly.p50': 13000,
};

function waiter<T>(timeoutMs: number, what: string): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${what}: not within ${timeoutMs / 1000} s`)), timeoutMs);
    resolve = (v) => {
      clearTimeout(timer);
      res(v);
    };
  });
  return { promise, resolve };
}

export const launchPrioritySuite: BenchSuite = {
  name: 'launch-priority',
  description: 'container ready -> next barrier key written (p50/p99, 100 pods); 3-level pod start vs no priorities',
  inDefaultRun: true,
  async run({ log, defer }) {
    const stack: LaunchStack = await startLaunchStack({ namespacePrefix: 'kd-lp-bench' });
    defer(() => stack.close());
    const run = Date.now().toString(36);
    const created: string[] = [];
    defer(() => deletePods(stack, created));

    // who waits for what: a key on a barrier, or a pod with every container ready
    const keyWaiters = new Map<string, (at: number) => void>();
    const readyWaiters = new Map<string, (at: number) => void>();
    const cmStream = await stack.client.watch<ConfigMapObject>(CoreResources.configMaps, {
      namespace: stack.namespace,
    });
    defer(() => cmStream.close());
    follow(cmStream, (cm) => {
      const at = Date.now();
      for (const key of Object.keys(cm.data ?? {})) keyWaiters.get(`${cm.metadata?.name}/${key}`)?.(at);
    });
    const podStream = await stack.client.watch<PodObject>(CoreResources.pods, { namespace: stack.namespace });
    defer(() => podStream.close());
    follow(podStream, (pod) => {
      if (allReady(pod)) readyWaiters.get(pod.metadata?.name ?? '')?.(performance.now());
    });

    const createPod = async (name: string, containers: ContainerDef[]): Promise<PodObject> => {
      const pod = await stack.client.create<PodObject>(
        CoreResources.pods,
        podManifest(stack.node.name, containers, { name }, stack.cluster.images.busybox1),
        { namespace: stack.namespace },
      );
      created.push(name);
      return pod;
    };
    const awaitReady = (name: string): Promise<number> => {
      const w = waiter<number>(120_000, `pod ${name} ready`);
      readyWaiters.set(name, w.resolve);
      return w.promise;
    };

    // warm-up: the image is present, the agent's informers and CRI connection are up
    log('warm-up pod');
    const warm = awaitReady(`lp-warm-${run}`);
    await createPod(`lp-warm-${run}`, LEVELS);
    await warm;

    /** Create pods `wave` at a time; for each, ms from the top container's start (CRI) to p_0 on the watch. */
    const measureRelease = async (label: string, wave: number): Promise<number[]> => {
      const delays: number[] = [];
      for (let first = 0; first < RELEASE_PODS; first += wave) {
        const names = Array.from({ length: wave }, (_, i) => `lp-${label}-${first + i}-${run}`);
        await Promise.all(
          names.map(async (name) => {
            const written = waiter<number>(120_000, `${name}-barrier p_0`);
            keyWaiters.set(`${name}-barrier/p_0`, written.resolve);
            const ready = awaitReady(name);
            const pod = await createPod(name, LEVELS);
            const keyAt = await written.promise;
            await ready;
            const started = (await runtimeStartTimes(stack.cri, pod.metadata!.uid!)).get('top');
            if (started === undefined) throw new Error(`${name}: no start time for container top`);
            delays.push(keyAt - Number(started / 1_000_000n));
          }),
        );
        await deletePods(stack, names);
      }
      return delays;
    };
    log(`${RELEASE_PODS} three-level pods one at a time: top ready -> p_0 written`);
    const releaseSequential = await measureRelease('seq', 1);
    log(`${RELEASE_PODS} three-level pods, ${WAVE} at a time`);
    const releaseBurst = await measureRelease('burst', WAVE);

    log(`pod start, ${START_RUNS} runs each: three levels vs no priorities`);
    const withPriorities: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < START_RUNS; i++) {
      for (const [containers, into, kind] of [
        [LEVELS, withPriorities, 'lvl'],
        [PLAIN, without, 'plain'],
      ] as const) {
        const name = `lp-start-${kind}-${i}-${run}`;
        const ready = awaitReady(name);
        const t0 = performance.now();
        await createPod(name, containers);
        into.push((await ready) - t0);
        await deletePods(stack, [name]);
      }
    }

    log(`probed 3-level pod, ${CONFIGMAP_ONLY_RUNS} runs: the agent`);
    const probedWithAgent: number[] = [];
    for (let i = 0; i < CONFIGMAP_ONLY_RUNS; i++) {
      const name = `lp-probed-${i}-${run}`;
      const ready = awaitReady(name);
      const t0 = performance.now();
      await createPod(name, PROBED);
      probedWithAgent.push((await ready) - t0);
      await deletePods(stack, [name]);
    }
    log(`probed 3-level pod, ${CONFIGMAP_ONLY_RUNS} runs: no agent, ConfigMap-only release (OpenKruise's way)`);
    const configMapOnly = await measureConfigMapOnly(stack, log, run);

    log('steady state: agent API requests for 10 s');
    const agentUrl = await stack.agent.baseUrl();
    const idleFrom = await agentCounter(agentUrl, 'kruise_daemon_api_requests_total');
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const idleRequests = (await agentCounter(agentUrl, 'kruise_daemon_api_requests_total')) - idleFrom;

    const metrics = await (await fetch(`${agentUrl}/metrics`)).text();
    const retries = Number(
      /kruise_daemon_launch_priority_pod_touches_total\{reason="retry"\} (\d+)/.exec(metrics)?.[1] ?? 0,
    );
    const r = (ms: number): number => Math.round(ms * 10) / 10;
    const figures: Figure[] = [
      ...p50p99(
        'release.sequential',
        releaseSequential,
        `${RELEASE_PODS} pods one at a time: top container started (CRI started_at) -> p_0 seen on a ConfigMap watch`,
      ),
      ...p50p99(
        'release.burst',
        releaseBurst,
        `${RELEASE_PODS} pods, ${WAVE} created at once (30 containers starting on 2 cores)`,
      ),
      ...p50p99(
        'start.3levels',
        withPriorities,
        `pod created -> all 3 containers ready, priorities 10/0/-5, ${START_RUNS} runs`,
      ),
      ...p50p99('start.noPriorities', without, 'the same pod without priorities'),
      {
        name: 'start.3levels.extra.p50',
        value: r(percentile(withPriorities, 50) - percentile(without, 50)),
        unit: 'ms',
        note: 'what the ordering costs (p50 difference)',
      },
      {
        name: 'start.probed3levels.agent.p50',
        value: r(percentile(probedWithAgent, 50)),
        unit: 'ms',
        note: `${CONFIGMAP_ONLY_RUNS} runs; top and middle have a readiness probe (period 1 s)`,
      },
      { name: 'start.probed3levels.agent.max', value: r(Math.max(...probedWithAgent)), unit: 'ms' },
      {
        name: 'start.probed3levels.configMapOnly.p50',
        value: r(percentile(configMapOnly, 50)),
        unit: 'ms',
        note: 'same pod, no agent: each key written once the status shows the level ready, pod never touched',
      },
      {
        name: 'start.probed3levels.configMapOnly.max',
        value: r(Math.max(...configMapOnly)),
        unit: 'ms',
        note: "slowest run (a run whose key came after kubelet's sync would wait for its 10 s retry)",
      },
      {
        name: 'steadyState.agentRequests',
        value: idleRequests,
        unit: 'count',
        note: "agent's API requests (kruise_daemon_api_requests_total) in 10 s after every pod completed",
      },
      {
        name: 'retouches',
        value: retries,
        unit: 'count',
        note: 'pods touched again because a released container had not started 2 s after the release',
      },
    ];
    return besideRecorded(figures, KUBELET_LITE_FIGURES, 'kubelet-lite');
  },
};

/**
 * The probed 3-level pod on the second node, where no agent runs, released the way OpenKruise's central controller
 * does: the ConfigMap is written (created with the top key, then each next key once the pod status shows the level
 * above ready), the pod is never touched. When kubelet synced the pod before the key existed, the released container
 * waits for kubelet's next retry of the failed start.
 */
async function measureConfigMapOnly(stack: LaunchStack, log: (m: string) => void, run: string): Promise<number[]> {
  const { namespace } = stack;
  const times: number[] = [];
  for (let i = 0; i < CONFIGMAP_ONLY_RUNS; i++) {
    const name = `lp-cmonly-${i}-${run}`;
    const t0 = performance.now();
    const pod = await stack.client.create<PodObject>(
      CoreResources.pods,
      podManifest(stack.nodeWithoutAgent.name, PROBED, { name }, stack.cluster.images.busybox1),
      { namespace },
    );
    const uid = pod.metadata!.uid!;
    await stack.client.create(
      CoreResources.configMaps,
      {
        metadata: { name: `${name}-barrier`, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] },
        data: { p_10: 'true' },
      },
      { namespace },
    );
    for (const [above, next] of [
      ['top', 'p_0'],
      ['middle', 'p_-5'],
    ] as const) {
      await waitUntil(async () => {
        const current = await stack.client.get<PodObject>(CoreResources.pods, name, { namespace });
        return current.status?.containerStatuses?.some((c) => c.name === above && c.ready) === true;
      });
      await stack.client.patch(
        CoreResources.configMaps,
        `${name}-barrier`,
        { data: { [next]: 'true' } },
        {
          type: 'merge',
          namespace,
        },
      );
    }
    await waitUntil(async () => allReady(await stack.client.get<PodObject>(CoreResources.pods, name, { namespace })));
    times.push(performance.now() - t0);
    log(`  ConfigMap-only pod ${i + 1}: ${Math.round(performance.now() - t0)} ms`);
    await deletePods(stack, [name]);
  }
  return times;
}

/** Poll every 50 ms (a central controller would see the status through a watch: same order of delay). */
async function waitUntil(check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('ConfigMap-only release: not within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
