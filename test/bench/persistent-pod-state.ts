// emulator: pods made Ready by the bench (no kubelet, no StatefulSet controller) and requests counted per user agent
// PersistentPodState in kruise-controller: the API emulator with two Ready Nodes, the controller as a real process
// (webhooks called by the emulator), one StatefulSet with the auto-generate + required hostname annotations, and its
// pods made by this process (no StatefulSet controller, no scheduler, no kubelet: each pod created as the StatefulSet
// controller would, bound with pods/binding, Ready written into the status). It stays on the emulator, unlike the e2e
// test, for its per-user-agent request counter and for pods made Ready without waiting on a kubelet. Figures:
// pod Ready written → its entry visible in the PPS (p50/p99, one pod at a time, seen through a watch); pod create
// round trip for a recreated StatefulSet pod (through the PPS pod webhook) versus a plain pod (not sent to it);
// the controller's API requests per minute at steady state besides its Lease; its RSS.
import { rssMiB } from '../component/daemon/agent-process.js';
import { Informer } from '../../src/kube/informer/informer.js';
import { CoreResources } from '../../src/kube/resource.js';
import { createReadyNode, startControllerEnv } from '../e2e/controller/controller-env.js';
import { ensureNamespace } from '../support/test-namespace.js';
import { PERSISTENT_POD_STATES } from '../../src/api/persistentpodstate.js';
import {
  HOSTNAME_LABEL,
  PIN_TO_NODE_ANNOTATIONS,
  STATEFULSETS,
  statefulSetManifest,
  type PersistentPodState,
  type PodObject,
  type StatefulSetObject,
} from '../e2e/persistentpodstate/manifests.js';
import type { KubeObject } from '../../src/kube/object.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';
import { DEPLOYMENT_LEASE_ARGS } from '../e2e/controller/controller-process.js';

const NS = 'pps-bench';
const NODES = ['pps-bench-a', 'pps-bench-b'];
const UA = 'kruise-controller';
const LEASES = '/apis/coordination.k8s.io/';

export const persistentPodStateSuite: BenchSuite = {
  name: 'persistent-pod-state',
  description:
    'kruise-controller PersistentPodState: pod Ready → entry recorded, pod create through the PPS webhook vs plain, steady-state API requests, RSS',
  inDefaultRun: true,
  async run(context) {
    const pods = Math.max(10, Math.min(context.iterations, 200));
    const env = await startControllerEnv({ bookmarkIntervalMs: 30_000 });
    context.defer(() => env.close());
    const { client, api } = env;
    for (const node of NODES) await createReadyNode(client, node);
    await ensureNamespace(client, NS);
    const controller = await env.startController([...DEPLOYMENT_LEASE_ARGS]);
    await controller.leading();

    const seen = new Map<string, number>();
    const ppsWatch = new Informer<PersistentPodState>(PERSISTENT_POD_STATES, client, { namespace: NS });
    const note = (p: PersistentPodState): void => {
      for (const name of Object.keys(p.status?.podStates ?? {})) if (!seen.has(name)) seen.set(name, performance.now());
    };
    ppsWatch.addHandlers({ onAdd: note, onUpdate: (_, p) => note(p) });
    ppsWatch.start();
    context.defer(() => ppsWatch.stop());
    await ppsWatch.synced;

    const sts = await client.create<StatefulSetObject>(
      STATEFULSETS,
      statefulSetManifest({
        namespace: NS,
        name: 'bench',
        replicas: pods,
        image: 'registry.invalid/busybox:1',
        annotations: { ...PIN_TO_NODE_ANNOTATIONS },
      }),
    );
    await waitFor(() => ppsWatch.store.has(`${NS}/bench`), { timeoutMs: 30_000, message: 'the PPS generated' });

    const bind = async (name: string, node: string): Promise<void> => {
      const res = await fetch(`${api.url}/api/v1/namespaces/${NS}/pods/${name}/binding`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name },
          target: { kind: 'Node', name: node },
        }),
      });
      if (res.status >= 300) throw new Error(`binding ${name}: ${res.status} ${await res.text()}`);
    };
    const makeReady = async (name: string): Promise<void> => {
      const pod = await client.get<PodObject>(CoreResources.pods, name, { namespace: NS });
      await client.updateStatus(CoreResources.pods, {
        ...pod,
        status: { ...pod.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    };

    context.log(`recording ${pods} pods, one at a time`);
    const recordMs: number[] = [];
    for (let i = 0; i < pods; i++) {
      const name = `bench-${i}`;
      await client.create(CoreResources.pods, statefulSetPod(sts, i), { namespace: NS });
      await bind(name, NODES[i % 2]!);
      await makeReady(name);
      const readyAt = performance.now();
      await waitFor(() => seen.has(name), { timeoutMs: 30_000, intervalMs: 1, message: `${name} recorded` });
      recordMs.push(seen.get(name)! - readyAt);
    }

    context.log('recreating pods through the webhook, and plain pods beside them');
    const pinnedMs: number[] = [];
    const plainMs: number[] = [];
    for (let i = 0; i < pods; i++) {
      const name = `bench-${i}`;
      await client.delete(CoreResources.pods, name, { namespace: NS, gracePeriodSeconds: 0 });
      await waitFor(
        () =>
          client.get(CoreResources.pods, name, { namespace: NS }).then(
            () => false,
            () => true,
          ),
        { timeoutMs: 30_000, intervalMs: 5, message: `${name} gone` },
      );
      let start = performance.now();
      const recreated = await client.create<PodObject>(CoreResources.pods, statefulSetPod(sts, i), { namespace: NS });
      pinnedMs.push(performance.now() - start);
      if (recreated.spec?.nodeSelector?.[HOSTNAME_LABEL] !== NODES[i % 2]) {
        throw new Error(`${name} was not pinned to ${NODES[i % 2]}: ${JSON.stringify(recreated.spec?.nodeSelector)}`);
      }
      const plain = statefulSetPod(sts, i);
      plain.metadata = { name: `plain-${i}`, namespace: NS, labels: { app: 'plain' } };
      start = performance.now();
      await client.create(CoreResources.pods, plain, { namespace: NS });
      plainMs.push(performance.now() - start);
    }

    const quietStart = api.requestCount({ userAgent: UA });
    const quietLeaseStart = api.requestCount({ userAgent: UA, pathPrefix: LEASES });
    const quietMs = 20_000;
    await new Promise((resolve) => setTimeout(resolve, quietMs)); // a measurement window, not a wait for a condition
    const perMinute = (n: number): number => (n * 60_000) / quietMs;
    const quietRequests = api.requestCount({ userAgent: UA }) - quietStart;
    const quietLease = api.requestCount({ userAgent: UA, pathPrefix: LEASES }) - quietLeaseStart;

    const figures: Figure[] = [
      { name: 'pods', value: pods, unit: 'count' },
      {
        name: 'record.p50',
        value: percentile(recordMs, 50),
        unit: 'ms',
        note: 'pod Ready written → entry seen by a watch',
      },
      { name: 'record.p99', value: percentile(recordMs, 99), unit: 'ms' },
      {
        name: 'createPinned.p50',
        value: percentile(pinnedMs, 50),
        unit: 'ms',
        note: 'recreated StatefulSet pod, PPS webhook',
      },
      { name: 'createPinned.p99', value: percentile(pinnedMs, 99), unit: 'ms' },
      {
        name: 'createPlain.p50',
        value: percentile(plainMs, 50),
        unit: 'ms',
        note: 'pod without the StatefulSet label',
      },
      { name: 'createPlain.p99', value: percentile(plainMs, 99), unit: 'ms' },
      {
        name: 'steady.apiRequestsPerMinute',
        value: perMinute(quietRequests - quietLease),
        unit: 'count',
        note: `besides the Lease (${perMinute(quietLease)}/min); ${quietMs / 1000} s window`,
      },
      { name: 'rss', value: rssMiB(controller.pid), unit: 'MiB', note: 'the whole controller process' },
    ];
    return figures;
  },
};

/** The pod the StatefulSet controller would create for this ordinal (the emulator runs no StatefulSet controller). */
function statefulSetPod(sts: StatefulSetObject, ordinal: number): PodObject {
  const name = `${sts.metadata!.name!}-${ordinal}`;
  const template = sts.spec!.template!;
  const meta: KubeObject['metadata'] = template.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: sts.metadata!.namespace,
      labels: { ...meta?.labels, 'statefulset.kubernetes.io/pod-name': name },
      annotations: { ...meta?.annotations },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: sts.metadata!.name!,
          uid: sts.metadata!.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: structuredClone(template.spec),
  };
}
