// kubelet-lite (test infrastructure) on the local cluster: pod created -> Running and Ready, p50/p99 over 50 pods on
// the cluster's own kubelet-lite (kubelet's timers, image present). Sequential: one pod at a time (the latency of
// one sync: sandbox with CNI, container create/start, status patch, watch delivery). Burst: 50 pods created at once.
// Times are from the create request to the watch event that shows the pod Running with every container ready.
import { CoreResources, KubeClient, loadConnection } from '../../src/kube/index.js';
import type { Pod } from '../cluster/kubelet-lite/types.js';
import { useCluster } from '../support/cluster.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

const PODS = 50;
const NAMESPACE = 'default';
const SLEEP_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

function runningAndReady(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
  );
}

/** Watches the run's pods and resolves each name's promise when it is Running and Ready. */
class ReadyWatch {
  private readonly waiters = new Map<string, (at: number) => void>();
  private readonly seen = new Map<string, number>();
  private stream?: { close(): void };

  constructor(
    private readonly kube: KubeClient,
    private readonly label: string,
  ) {}

  async start(): Promise<void> {
    const stream = await this.kube.watch<Pod>(CoreResources.pods, {
      namespace: NAMESPACE,
      labelSelector: `kubelet-lite-bench=${this.label}`,
    });
    this.stream = stream;
    void (async () => {
      for await (const event of stream) {
        const pod = event.object;
        const name = pod.metadata?.name;
        if (!name || this.seen.has(name) || !runningAndReady(pod)) continue;
        const at = performance.now();
        this.seen.set(name, at);
        this.waiters.get(name)?.(at);
      }
    })().catch(() => undefined);
  }

  readyAt(name: string): Promise<number> {
    const at = this.seen.get(name);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`pod ${name} not Running and Ready within 120 s`)), 120_000);
      this.waiters.set(name, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
  }

  close(): void {
    this.stream?.close();
  }
}

function manifest(name: string, node: string, label: string, image: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { 'kubelet-lite-bench': label } },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image, command: SLEEP_FOREVER }],
    },
  } as unknown as Pod;
}

export const kubeletLiteSuite: BenchSuite = {
  name: 'kubelet-lite',
  description: 'pod created -> Running and Ready on kubelet-lite, p50/p99 over 50 pods (one at a time, and a burst)',
  inDefaultRun: true,
  async run({ log, defer }) {
    const cluster = await useCluster();
    const node = cluster.vars.NODE_NAME;
    if (!node || !cluster.vars.KUBECONFIG)
      throw new Error('the local cluster has no API emulator/kubelet-lite (NODE_NAME, KUBECONFIG)');
    const kube = new KubeClient(await loadConnection({ kubeconfig: cluster.vars.KUBECONFIG }));
    defer(() => kube.close());
    const label = `run-${Date.now().toString(36)}`;
    const created: string[] = [];
    defer(async () => {
      for (const name of created) {
        await kube
          .delete(CoreResources.pods, name, { namespace: NAMESPACE, gracePeriodSeconds: 0 })
          .catch(() => undefined);
      }
    });
    const watch = new ReadyWatch(kube, label);
    await watch.start();
    defer(() => watch.close());

    const once = async (name: string): Promise<number> => {
      const start = performance.now();
      const ready = watch.readyAt(name);
      await kube.create(CoreResources.pods, manifest(name, node, label, cluster.images.busybox1), {
        namespace: NAMESPACE,
      });
      created.push(name);
      return (await ready) - start;
    };
    log(`warm-up pod (image pull) on ${node}`);
    await once(`bench-warm-${label}`);
    log(`${PODS} pods one at a time`);
    const sequential: number[] = [];
    for (let i = 0; i < PODS; i++) sequential.push(await once(`bench-seq-${i}-${label}`));
    log(`${PODS} pods at once`);
    const burstStart = performance.now();
    const burst = await Promise.all(Array.from({ length: PODS }, (_, i) => once(`bench-burst-${i}-${label}`)));
    const burstTotal = performance.now() - burstStart;
    const r = (ms: number): number => Math.round(ms * 10) / 10;
    const figures: Figure[] = [
      {
        name: 'podRunning.sequential.p50',
        value: r(percentile(sequential, 50)),
        unit: 'ms',
        note: `${PODS} pods, one at a time`,
      },
      { name: 'podRunning.sequential.p99', value: r(percentile(sequential, 99)), unit: 'ms' },
      {
        name: 'podRunning.burst.p50',
        value: r(percentile(burst, 50)),
        unit: 'ms',
        note: `${PODS} pods created at once`,
      },
      { name: 'podRunning.burst.p99', value: r(percentile(burst, 99)), unit: 'ms' },
      {
        name: 'podRunning.burst.all',
        value: r(burstTotal),
        unit: 'ms',
        note: 'until the last one is Running and Ready',
      },
    ];
    return figures;
  },
};
