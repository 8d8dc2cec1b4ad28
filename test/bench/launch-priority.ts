// Container launch priority on the local cluster (in-process emulator with the pod webhook handler as an admission
// plugin, so the controller's CPU does not blur the figures; the e2e tests use the real controller), kubelet-lite on
// its own node with kubelet's timers, real containerd, the agent as a process):
// - release: from the higher-priority container ready (CRI started_at; no probes, so running = ready) to the next
//   barrier key seen on a ConfigMap watch, p50/p99 over 100 pods (3 levels), one pod at a time and 10 at a time;
// - start: pod created -> every container ready, a 3-level pod (10, 0, -5) versus the same pod without priorities;
// - steady state: the agent's configmap/pod requests in the 10 s after every pod completed (should be 0).
import { CoreResources } from '../../src/kube/resource.js';
import type { WatchStream } from '../../src/kube/watch-stream.js';
import {
  allReady,
  deletePods,
  NAMESPACE,
  podManifest,
  runtimeStartTimes,
  startLaunchStack,
  type ConfigMapObject,
  type ContainerDef,
  type LaunchStack,
  type PodObject,
} from '../e2e/launchpriority/stack.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

const NODE = 'lp-bench-node';
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
    const stack: LaunchStack = await startLaunchStack({ node: NODE, webhook: 'in-process' });
    defer(() => stack.close());
    const run = Date.now().toString(36);
    const created: string[] = [];
    defer(() => deletePods(stack.client, created));

    // who waits for what: a key on a barrier, or a pod with every container ready
    const keyWaiters = new Map<string, (at: number) => void>();
    const readyWaiters = new Map<string, (at: number) => void>();
    const cmStream = await stack.client.watch<ConfigMapObject>(CoreResources.configMaps, { namespace: NAMESPACE });
    defer(() => cmStream.close());
    follow(cmStream, (cm) => {
      const at = Date.now();
      for (const key of Object.keys(cm.data ?? {})) keyWaiters.get(`${cm.metadata?.name}/${key}`)?.(at);
    });
    const podStream = await stack.client.watch<PodObject>(CoreResources.pods, { namespace: NAMESPACE });
    defer(() => podStream.close());
    follow(podStream, (pod) => {
      if (allReady(pod)) readyWaiters.get(pod.metadata?.name ?? '')?.(performance.now());
    });

    const createPod = async (name: string, containers: ContainerDef[]): Promise<PodObject> => {
      const pod = await stack.client.create<PodObject>(
        CoreResources.pods,
        podManifest(NODE, containers, { name }, stack.cluster.images.busybox1),
        { namespace: NAMESPACE },
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
        await deletePods(stack.client, names);
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
        await deletePods(stack.client, [name]);
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
      await deletePods(stack.client, [name]);
    }
    log(`probed 3-level pod, ${CONFIGMAP_ONLY_RUNS} runs: no agent, ConfigMap-only release (OpenKruise's way)`);
    const configMapOnly = await measureConfigMapOnly(log, defer, run);

    log('steady state: agent requests on configmaps and pods for 10 s');
    const agentRequests = (): number =>
      stack.api.requestCount({ userAgent: 'kruise-daemon', pathPrefix: `/api/v1/namespaces/${NAMESPACE}/` });
    const idleFrom = agentRequests();
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const idleRequests = agentRequests() - idleFrom;

    const metrics = await (await fetch(`${await stack.agent.baseUrl()}/metrics`)).text();
    const retries = Number(
      /kruise_daemon_launch_priority_pod_touches_total\{reason="retry"\} (\d+)/.exec(metrics)?.[1] ?? 0,
    );
    const r = (ms: number): number => Math.round(ms * 10) / 10;
    const figures: Figure[] = [
      {
        name: 'release.sequential.p50',
        value: r(percentile(releaseSequential, 50)),
        unit: 'ms',
        note: `${RELEASE_PODS} pods one at a time: top container started (CRI started_at) -> p_0 seen on a ConfigMap watch`,
      },
      { name: 'release.sequential.p99', value: r(percentile(releaseSequential, 99)), unit: 'ms' },
      {
        name: 'release.burst.p50',
        value: r(percentile(releaseBurst, 50)),
        unit: 'ms',
        note: `${RELEASE_PODS} pods, ${WAVE} created at once (30 containers starting on 2 cores)`,
      },
      { name: 'release.burst.p99', value: r(percentile(releaseBurst, 99)), unit: 'ms' },
      {
        name: 'start.3levels.p50',
        value: r(percentile(withPriorities, 50)),
        unit: 'ms',
        note: `pod created -> all 3 containers ready, priorities 10/0/-5, ${START_RUNS} runs`,
      },
      { name: 'start.3levels.p99', value: r(percentile(withPriorities, 99)), unit: 'ms' },
      {
        name: 'start.noPriorities.p50',
        value: r(percentile(without, 50)),
        unit: 'ms',
        note: 'the same pod without priorities',
      },
      { name: 'start.noPriorities.p99', value: r(percentile(without, 99)), unit: 'ms' },
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
        note: 'a run where kubelet-lite synced before the key existed: the 10-15 s retry, per level',
      },
      {
        name: 'steadyState.agentRequests',
        value: idleRequests,
        unit: 'count',
        note: "agent's configmap/pod requests in 10 s after every pod completed",
      },
      {
        name: 'retouches',
        value: retries,
        unit: 'count',
        note: 'pods touched again because a released container had not started 2 s after the release',
      },
    ];
    return figures;
  },
};

/**
 * The probed 3-level pod on a second node without the agent, released the way OpenKruise's central controller does:
 * the ConfigMap is written (created with the top key, then each next key once the pod status shows the level above
 * ready), the pod is never touched. The readiness change made kubelet sync the pod before the key existed, so the
 * released container waits for kubelet's next retry (10-15 s). (Without probes kubelet-lite understates this: it
 * writes a started container's status at the end of the sync that started it, where kubelet writes it at the start
 * of the next sync, so a status-driven releaser can beat kubelet-lite's next PLEG-triggered sync.)
 */
async function measureConfigMapOnly(
  log: (m: string) => void,
  defer: (f: () => unknown) => void,
  run: string,
): Promise<number[]> {
  const stack = await startLaunchStack({ node: `${NODE}-cm-only`, webhook: 'in-process', agent: false });
  defer(() => stack.close());
  const times: number[] = [];
  for (let i = 0; i < CONFIGMAP_ONLY_RUNS; i++) {
    const name = `lp-cmonly-${i}-${run}`;
    const t0 = performance.now();
    const pod = await stack.client.create<PodObject>(
      CoreResources.pods,
      podManifest(stack.node, PROBED, { name }, stack.cluster.images.busybox1),
      { namespace: NAMESPACE },
    );
    const uid = pod.metadata!.uid!;
    await stack.client.create(
      CoreResources.configMaps,
      {
        metadata: { name: `${name}-barrier`, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] },
        data: { p_10: 'true' },
      },
      { namespace: NAMESPACE },
    );
    for (const [above, next] of [
      ['top', 'p_0'],
      ['middle', 'p_-5'],
    ] as const) {
      await waitUntil(async () => {
        const current = await stack.client.get<PodObject>(CoreResources.pods, name, { namespace: NAMESPACE });
        return current.status?.containerStatuses?.some((c) => c.name === above && c.ready) === true;
      });
      await stack.client.patch(
        CoreResources.configMaps,
        `${name}-barrier`,
        { data: { [next]: 'true' } },
        {
          type: 'merge',
          namespace: NAMESPACE,
        },
      );
    }
    await waitUntil(async () =>
      allReady(await stack.client.get<PodObject>(CoreResources.pods, name, { namespace: NAMESPACE })),
    );
    times.push(performance.now() - t0);
    log(`  ConfigMap-only pod ${i + 1}: ${Math.round(performance.now() - t0)} ms`);
    await deletePods(stack.client, [name]);
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
