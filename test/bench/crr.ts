// emulator: only the RSS part (110 pods registered without running them, the agent's requests counted per user agent);
// the CRR figures run on the real cluster
// ContainerRecreateRequests: how fast the agent reacts to a new CRR (CRR created → StopContainer issued, from the
// agent's own log line written right before the CRI call, both clocks being this machine's), how long until the CRR
// is Completed and until kubelet reports the container running again, each beside kubelet-lite's figure, over 100 CRRs on
// real containers (the real local cluster: API server, kubelet and containerd of a node, our agent inside that node
// with the DaemonSet's heap flags, the controller on the host); and the agent's RSS and API requests with 110 pods on
// its node (pods registered with the API emulator only, not run: its request counter counts the agent's requests).
import { DAEMONSET_HEAP_FLAGS } from './agent-memory.js';
import { besideRecorded, type BenchSuite, type Figure } from './framework.js';
import { percentile } from './stats.js';
import { AgentProcess, httpGet, rssMiB } from '../component/daemon/agent-process.js';
import { CoreResources } from '../../src/kube/resource.js';
import { startEmulatorWithCrds } from '../support/emulator-with-crds.js';
import { waitFor } from '../support/wait.js';
import {
  containerStatus,
  createCrr,
  getPod,
  runPod,
  SLEEP_FOREVER,
  startCrrStack,
  waitCompleted,
  type PodObject,
} from '../e2e/containerrecreate/stack.js';

const CRR_COUNT = 100;
/** Each CRR restarts a different container: kubelet's crash backoff (10 s, 20 s, ...) stays out of the figures. */
const PARALLEL_PODS = 10;
const CONTAINERS_PER_POD = 10;
const PODS_ON_NODE = 110;
/** The emulator's namespace for the RSS part. */
const NAMESPACE = 'default';

/**
 * The same figures measured on kubelet-lite (API emulator, kubelet-lite and containerd on the host, the agent and the
 * controller as host processes) by this suite's loop as it was on main 5c5dace (plus the Completed/running
 * measurements), run once on 2026-11-25 with Node 24, back to back with the real-cluster run, on the same shared
 * 2-core machine (load average 20-30). Earlier, quieter runs on kubelet-lite measured createdToStop p50 19 ms / p99
 * 71 ms (commit 492d629) and p50 66 ms / p99 335 ms (docs/container-recreate.md): compare runs of one session only.
 */
export const KUBELET_LITE_FIGURES: Readonly<Record<string, number>> = {
  'createdToStop.p50': 167,
  'createdToStop.p99': 936,
  'inAgent.p50': 159,
  'inAgent.p99': 995,
  'createdToCompleted.p50': 2863,
  'createdToCompleted.p99': 6839,
  'createdToRunning.p50': 3019,
  'createdToRunning.p99': 6869,
};

export const crrSuite: BenchSuite = {
  name: 'crr',
  description: 'CRR created → StopContainer p50/p99 (100 CRRs, real containers); agent RSS with 110 pods on its node',
  inDefaultRun: true,
  async run(context) {
    const figures: Figure[] = [];
    const stack = await startCrrStack({ namespace: 'bench-crr' });
    context.defer(() => stack.close());
    const image = stack.cluster.images.busybox1;
    const pods: string[] = [];
    /** Per pod/container: the id of the instance each CRR replaces. */
    const oldIds = new Map<string, string | undefined>();
    for (let i = 0; i < PARALLEL_PODS; i++) {
      const pod: PodObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `crr-bench-${i}`, namespace: stack.namespace },
        spec: {
          nodeName: stack.node.name,
          terminationGracePeriodSeconds: 2,
          containers: Array.from({ length: CONTAINERS_PER_POD }, (_, c) => ({
            name: `c${c}`,
            image,
            command: SLEEP_FOREVER,
          })),
        },
      };
      const running = await runPod(stack, pod, 180_000);
      pods.push(pod.metadata!.name!);
      for (const status of running.status?.containerStatuses ?? []) {
        oldIds.set(`${pod.metadata!.name!}/${status.name}`, status.containerID);
      }
    }
    context.log(`${pods.length} pods running; ${CRR_COUNT} CRRs, ${PARALLEL_PODS} pods at a time`);
    const samples: number[] = [];
    const inAgent: number[] = [];
    const toCompleted: number[] = [];
    const toRunning: number[] = [];
    let seq = 0;
    while (samples.length < CRR_COUNT) {
      const round = pods.slice(0, Math.min(PARALLEL_PODS, CRR_COUNT - samples.length));
      await Promise.all(
        round.map(async (podName) => {
          const name = `crr-bench-${++seq}`;
          const container = `c${Math.floor(samples.length / PARALLEL_PODS) % CONTAINERS_PER_POD}`;
          await createCrr(stack, name, {
            podName,
            containers: [{ name: container }],
            strategy: { terminationGracePeriodSeconds: 2 },
          });
          const created = Date.now();
          const line = await waitFor(
            () =>
              stack.agent.logs.find(
                (l) => l.msg === 'stopping container' && typeof l.crr === 'string' && l.crr.endsWith(`/${name}`),
              ),
            { timeoutMs: 30_000, message: `agent stopping a container for ${name}` },
          );
          if (typeof line.sinceArrivalMs === 'number') inAgent.push(line.sinceArrivalMs);
          samples.push((typeof line.time === 'string' ? Date.parse(line.time) : Number(line.time)) - created);
          await waitCompleted(stack, name, 120_000);
          toCompleted.push(Date.now() - created);
          await waitFor(
            () =>
              getPod(stack, podName).then((p) => {
                const status = p && containerStatus(p, container);
                return status?.state?.running && status.containerID !== oldIds.get(`${podName}/${container}`);
              }),
            { timeoutMs: 60_000, intervalMs: 10, message: `${podName}/${container} running again` },
          );
          toRunning.push(Date.now() - created);
        }),
      );
    }
    const measured: Figure[] = [
      {
        name: 'createdToStop.p50',
        value: percentile(samples, 50),
        unit: 'ms',
        note: `${samples.length} CRRs on ${PARALLEL_PODS} pods of ${CONTAINERS_PER_POD} containers, one CRR per pod at a time, each container once; from the create response to the agent's log line before StopContainer`,
      },
      { name: 'createdToStop.p99', value: percentile(samples, 99), unit: 'ms' },
      { name: 'createdToStop.max', value: Math.max(...samples), unit: 'ms' },
      {
        name: 'inAgent.p50',
        value: percentile(inAgent, 50),
        unit: 'ms',
        note: "from the CRR's arrival in the agent's watch cache to its log line before StopContainer",
      },
      { name: 'inAgent.p99', value: percentile(inAgent, 99), unit: 'ms' },
      {
        name: 'createdToCompleted.p50',
        value: percentile(toCompleted, 50),
        unit: 'ms',
        note: 'from the create response to the CRR read back Completed (polled every 25 ms)',
      },
      { name: 'createdToCompleted.p99', value: percentile(toCompleted, 99), unit: 'ms' },
      {
        name: 'createdToRunning.p50',
        value: percentile(toRunning, 50),
        unit: 'ms',
        note: "from the create response to the pod's status showing a new instance of the container running (after Completed)",
      },
      { name: 'createdToRunning.p99', value: percentile(toRunning, 99), unit: 'ms' },
    ];
    figures.push(...besideRecorded(measured, KUBELET_LITE_FIGURES, 'kubelet-lite'));
    await stack.close();

    // 110 pods registered with the API emulator only (bound to the node, with container statuses), the agent watching
    // them (its runtime: the real node's containerd, where none of them runs)
    const emulator = await startEmulatorWithCrds();
    context.defer(() => emulator.close());
    const rssNode = 'crr-rss-node';
    for (let i = 0; i < PODS_ON_NODE; i++) {
      const name = `rss-pod-${i}`;
      await emulator.client.create(
        CoreResources.pods,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: NAMESPACE, labels: { app: 'rss' }, annotations: { note: 'x'.repeat(200) } },
          spec: {
            nodeName: rssNode,
            containers: [
              {
                name: 'app',
                image,
                env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['note']" } } }],
              },
              { name: 'side', image },
            ],
          },
        },
        { namespace: NAMESPACE },
      );
    }
    const agent = new AgentProcess({
      env: {
        NODE_NAME: rssNode,
        RUNTIME_SOCKET: stack.node.hostPaths.runtimeSocket,
        KUBECONFIG: emulator.kubeconfig,
        LOG_LEVEL: 'info',
        NODE_OPTIONS: DAEMONSET_HEAP_FLAGS,
      },
    });
    context.defer(() => agent.stop());
    const base = await agent.baseUrl();
    await waitFor(async () => (await httpGet(`${base}/healthz`)).status === 200, {
      timeoutMs: 30_000,
      message: 'agent healthy',
    });
    let peak = 0;
    const samplesMiB: number[] = [];
    const settleStart = Date.now();
    await waitFor(
      () => {
        const mib = rssMiB(agent.pid);
        peak = Math.max(peak, mib);
        samplesMiB.push(mib);
        const last = samplesMiB.slice(-10);
        return Date.now() - settleStart > 5000 && Math.max(...last) - Math.min(...last) < 0.5;
      },
      { timeoutMs: 60_000, intervalMs: 200, message: 'RSS to settle' },
    );
    const before = emulator.api.requestCount({ userAgent: 'kruise-daemon' });
    const idleMs = 20_000;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const requests = emulator.api.requestCount({ userAgent: 'kruise-daemon' }) - before;
    figures.push(
      {
        name: 'rss.110pods',
        value: samplesMiB[samplesMiB.length - 1]!,
        unit: 'MiB',
        note: `${PODS_ON_NODE} pods registered with the API only (not run), heap flags`,
      },
      { name: 'rss.110pods.peak', value: peak, unit: 'MiB' },
      {
        name: 'apiRequests.idle',
        value: requests,
        unit: 'count',
        note: `agent requests in ${idleMs / 1000} s idle with ${PODS_ON_NODE} pods (watches stay open)`,
      },
    );
    await agent.stop();
    return figures;
  },
};
