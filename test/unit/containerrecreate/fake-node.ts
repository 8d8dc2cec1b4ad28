// A node for the CRR unit tests against the in-process emulator: pods whose containers live in a FakeContainerRuntime
// and whose status a fake kubelet reports (after every StopContainer, the new instance running and ready), and CRRs
// as the webhook would have admitted them (labels, statusContext).
import { CRR_ACTIVE_LABEL, CRR_NODE_NAME_LABEL, CRR_POD_UID_LABEL } from '../../../src/api/constants.js';
import {
  type ContainerRecreateRequest,
  type ContainerRecreateRequestContainer,
  CONTAINER_RECREATE_REQUESTS,
} from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import {
  CoreResources,
  type KubeClient,
  type KubeObject,
  type ListWatcher,
  type WatchStream,
} from '../../../src/kube/index.js';
import { FakeWatch } from '../kube/support/fake-list-watcher.js';
import type { FakeContainerRuntime } from './fake-runtime.js';

export const NS = 'default';

/** Names are unique within the process (tests share an emulator). */
let seq = 0;

export class FakeNode {
  /** What kubelet says about a container it has not started again (CrashLoopBackOff, ...), by name. */
  readonly waiting = new Map<string, { reason: string; message: string }>();

  constructor(
    readonly client: KubeClient,
    readonly runtime: FakeContainerRuntime,
    readonly nodeName: string,
  ) {}

  /** What kubelet would report: the newest instance of each container, running and ready. */
  async reportStatus(pod: WirePod): Promise<void> {
    const uid = pod.metadata!.uid!;
    const containerStatuses = pod.spec!.containers.map((c) => {
      const cur = this.runtime.current(uid, c.name)!;
      return {
        name: c.name,
        image: 'busybox',
        imageID: '',
        containerID: `containerd://${cur.id}`,
        restartCount: cur.restartCount,
        ready: cur.state === 'CONTAINER_RUNNING',
        started: true,
        state:
          cur.state === 'CONTAINER_RUNNING'
            ? { running: { startedAt: '2026-01-01T00:00:00Z' } }
            : this.waiting.has(c.name)
              ? { waiting: this.waiting.get(c.name) }
              : { terminated: { exitCode: 0 } },
      };
    });
    await this.client.patch(
      CoreResources.pods,
      pod.metadata!.name!,
      { status: { phase: 'Running', podIP: '10.0.0.9', containerStatuses } },
      { type: 'merge', namespace: NS, subresource: 'status' },
    );
  }

  /** A pod on this node with these containers running (and reported); every stop is followed by a report. */
  async makePod(names: string[], spec: Partial<NonNullable<WirePod['spec']>> = {}): Promise<WirePod> {
    const { client, runtime } = this;
    const pod = await client.create<WirePod>(
      CoreResources.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${++seq}`, namespace: NS },
        spec: { nodeName: this.nodeName, containers: names.map((n) => ({ name: n, image: 'busybox' })), ...spec },
      },
      { namespace: NS },
    );
    for (const n of names) runtime.add(pod.metadata!.uid!, n);
    await this.reportStatus(pod);
    const stop = runtime.stopContainer.bind(runtime);
    runtime.stopContainer = async (req, opts) => {
      const res = await stop(req, opts);
      const current = await client.get<WirePod>(CoreResources.pods, pod.metadata!.name!, { namespace: NS });
      if (current.spec!.containers.some((c) => runtime.current(current.metadata!.uid!, c.name)))
        await this.reportStatus(current).catch(() => undefined);
      return res;
    };
    return client.get<WirePod>(CoreResources.pods, pod.metadata!.name!, { namespace: NS });
  }

  /** A CRR of these containers as admitted (statusContext from the pod's status unless `ctx` is false). */
  makeCrr(
    pod: WirePod,
    names: string[],
    strategy: ContainerRecreateRequest['spec']['strategy'] = {},
    options: {
      ctx?: boolean;
      activeDeadlineSeconds?: number | undefined;
      container?: (name: string) => Partial<ContainerRecreateRequestContainer>;
    } = {},
  ): Promise<ContainerRecreateRequest> {
    const statuses = pod.status?.containerStatuses ?? [];
    return this.client.create<ContainerRecreateRequest>(
      CONTAINER_RECREATE_REQUESTS,
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ContainerRecreateRequest',
        metadata: {
          name: `crr${++seq}`,
          namespace: NS,
          labels: {
            [CRR_NODE_NAME_LABEL]: this.nodeName,
            [CRR_ACTIVE_LABEL]: 'true',
            [CRR_POD_UID_LABEL]: pod.metadata!.uid!,
          },
        },
        spec: {
          podName: pod.metadata!.name!,
          containers: names.map((n) => {
            const cs = statuses.find((s) => s.name === n)!;
            const extra = options.container?.(n) ?? {};
            return options.ctx === false
              ? { name: n, ...extra }
              : { name: n, statusContext: { containerID: cs.containerID!, restartCount: cs.restartCount }, ...extra };
          }),
          strategy: { failurePolicy: 'Fail', terminationGracePeriodSeconds: 1, ...strategy },
          ...(options.activeDeadlineSeconds !== undefined
            ? { activeDeadlineSeconds: options.activeDeadlineSeconds }
            : {}),
        },
      },
      { namespace: NS },
    );
  }
}

/** A list/watch that shows these objects and then no change at all: a cache that is behind the API server. */
export function frozenSource<T extends KubeObject>(objects: T[]): ListWatcher<T> {
  const rv = objects.map((o) => o.metadata?.resourceVersion).find(Boolean);
  return {
    list: () => Promise.resolve({ items: objects, metadata: { resourceVersion: rv } }),
    watch: (opts) => Promise.resolve(new FakeWatch(opts) as unknown as WatchStream<T>),
  };
}
