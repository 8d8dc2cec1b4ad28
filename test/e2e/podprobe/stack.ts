// What the custom-probe e2e tests and benchmark share, on the real local cluster (test/support/real-cluster.ts): our
// system as deployed (startSystem: kruise-controller on the host, its PodProbeMarker webhook called by the real API
// server, its PodProbeMarker and NodePodProbe controllers running; an agent inside each node with that node's
// ServiceAccount token, running the node's probes through the node's containerd), the real StatefulSet controller,
// kube-scheduler and kubelets, the real kubectl (`kubectl exec` toggles the files the probes look at), and a
// namespace of the file's own, deleted at the end while the controller still runs (markers carry its finalizer).
import { NODE_POD_PROBES, type NodePodProbe, type PodProbe } from '../../../src/api/nodepodprobe.js';
import {
  POD_PROBE_MARKERS,
  type PodContainerProbe,
  type PodProbeMarker,
  type ProbeMarkerPolicy,
} from '../../../src/api/podprobemarker.js';
import { NODE_POD_PROBE_CLEANUP_FINALIZER } from '../../../src/api/constants.js';
import type { WirePod, WirePodCondition } from '../../../src/api/wire.js';
import { STATEFULSETS } from '../../../src/controller/persistentpodstate/resources.js';
import { CriClient } from '../../../src/cri/client.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { Kubectl } from '../../component/apiserver/kubectl.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';
import { waitFor } from '../../support/wait.js';

/** PID 1 that exits at SIGTERM (so `kill 1` in the container restarts it) and otherwise sleeps. */
export const SLEEP_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

export type PodObject = WirePod & KubeObject;

export interface StatefulSetObject extends KubeObject {
  spec?: { replicas?: number } & Record<string, unknown>;
  status?: { readyReplicas?: number; replicas?: number; observedGeneration?: number };
}

/** Where the helpers below look: a client and the stack's namespace. */
export interface ProbeScope {
  client: KubeClient;
  namespace: string;
}

export interface ProbeStack extends ProbeScope {
  cluster: RealCluster;
  system: RealSystem;
  nodes: NodeLayout[];
  kubectl: Kubectl;
  /** CRI on the containerd of `node` (opened on first use). */
  cri(node: NodeLayout): CriClient;
  /** Delete the namespace (markers first, waiting for their finalizers), stop the system. Once. */
  close(): Promise<void>;
}

const NAMESPACE_GONE_TIMEOUT_MS = 120_000;

/** The real cluster with the controller and an agent on every node, in a namespace of its own. */
export async function startProbeStack(options: {
  namespacePrefix: string;
  agentArgs?: string[];
  agentEnv?: Record<string, string>;
  controllerArgs?: string[];
}): Promise<ProbeStack> {
  const cluster = await useRealCluster();
  const client = cluster.admin;
  const namespace = await createTestNamespace(client, options.namespacePrefix, { forPods: true });
  const kubectl = await Kubectl.forKubeconfig(cluster.adminKubeconfig);
  const cris = new Map<string, CriClient>();
  let system: RealSystem | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await deleteMarkers({ client, namespace });
        await deleteTestNamespace(client, namespace, { waitMs: NAMESPACE_GONE_TIMEOUT_MS });
      } finally {
        await system?.stop();
        for (const cri of cris.values()) cri.close();
        await kubectl.cleanup();
      }
    })();
    return closing;
  };
  try {
    system = await startSystem(cluster, {
      agentArgs: options.agentArgs ?? [],
      agentEnv: options.agentEnv,
      controllerArgs: options.controllerArgs,
    });
    await system.controller!.leading(60_000);
  } catch (err) {
    await close();
    throw err;
  }
  const started = system;
  return {
    cluster,
    system: started,
    nodes: cluster.nodes,
    client,
    namespace,
    kubectl,
    cri(node) {
      let cri = cris.get(node.name);
      if (!cri) {
        cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
        cris.set(node.name, cri);
      }
      return cri;
    },
    close,
  };
}

/**
 * Delete the namespace's markers and wait until they are gone (the controller removes its finalizer once their probes
 * are out of every NodePodProbe). If they are still there after the deadline, the finalizer is taken off by hand (so
 * the namespace can go) and the error is thrown: the test that ran last failed to clean up.
 */
export async function deleteMarkers(scope: ProbeScope, timeoutMs = 60_000): Promise<void> {
  const list = await scope.client.list<PodProbeMarker>(POD_PROBE_MARKERS, { namespace: scope.namespace });
  for (const m of list.items) await deleteMarker(scope, m.metadata.name!);
  try {
    await waitFor(
      async () =>
        (await scope.client.list<PodProbeMarker>(POD_PROBE_MARKERS, { namespace: scope.namespace })).items.length === 0,
      { timeoutMs, intervalMs: 250, message: `every PodProbeMarker of ${scope.namespace} gone` },
    );
  } catch (err) {
    const left = await scope.client.list<PodProbeMarker>(POD_PROBE_MARKERS, { namespace: scope.namespace });
    for (const m of left.items) {
      await scope.client
        .patch(
          POD_PROBE_MARKERS,
          m.metadata.name!,
          { metadata: { finalizers: null } },
          {
            type: 'merge',
            namespace: scope.namespace,
          },
        )
        .catch(() => undefined);
    }
    throw err;
  }
}

export async function deleteMarker(scope: ProbeScope, name: string): Promise<void> {
  await scope.client.delete(POD_PROBE_MARKERS, name, { namespace: scope.namespace }).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}

// ---- manifests ----------------------------------------------------------------------------------------------------

export interface ExecProbeOptions {
  name: string;
  containerName: string;
  command: string[];
  podConditionType?: string;
  markerPolicy?: ProbeMarkerPolicy[];
  periodSeconds?: number;
}

/** An exec probe run every second (by default) with a 1 s timeout. */
export function execProbe(o: ExecProbeOptions): PodContainerProbe {
  return {
    name: o.name,
    containerName: o.containerName,
    probe: { exec: { command: o.command }, periodSeconds: o.periodSeconds ?? 1, timeoutSeconds: 1 },
    ...(o.podConditionType !== undefined && { podConditionType: o.podConditionType }),
    ...(o.markerPolicy !== undefined && { markerPolicy: o.markerPolicy }),
  };
}

export function markerManifest(
  namespace: string,
  name: string,
  matchLabels: Record<string, string>,
  probes: PodContainerProbe[],
): PodProbeMarker {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'PodProbeMarker',
    metadata: { name, namespace },
    spec: { selector: { matchLabels }, probes },
  };
}

export interface ContainerSpec {
  name: string;
  command?: string[];
  ports?: { name?: string; containerPort: number }[];
}

/**
 * A StatefulSet (Parallel) whose pods carry `app: <name>`, at most one per node (topology spread on the hostname,
 * DoNotSchedule): with 2 replicas on the 2 nodes, one pod per node, as OpenKruise's e2e spreads its pods.
 */
export function statefulSetManifest(
  namespace: string,
  name: string,
  replicas: number,
  image: string,
  containers: ContainerSpec[],
): StatefulSetObject {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace },
    spec: {
      replicas,
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: labels },
            },
          ],
          containers: containers.map((c) => ({
            name: c.name,
            image,
            command: c.command ?? SLEEP_FOREVER,
            ...(c.ports && { ports: c.ports }),
          })),
        },
      },
    },
  };
}

export async function scaleStatefulSet(scope: ProbeScope, name: string, replicas: number): Promise<void> {
  await scope.client.patch(STATEFULSETS, name, { spec: { replicas } }, { type: 'merge', namespace: scope.namespace });
}

export async function createStatefulSet(scope: ProbeScope, sts: StatefulSetObject): Promise<void> {
  await scope.client.create(STATEFULSETS, sts, { namespace: scope.namespace });
}

// ---- readers ------------------------------------------------------------------------------------------------------

async function found<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function getPod(scope: ProbeScope, name: string): Promise<PodObject | undefined> {
  return found(scope.client.get<PodObject>(CoreResources.pods, name, { namespace: scope.namespace }));
}

export function getMarker(scope: ProbeScope, name: string): Promise<PodProbeMarker | undefined> {
  return found(scope.client.get<PodProbeMarker>(POD_PROBE_MARKERS, name, { namespace: scope.namespace }));
}

export function getNodePodProbe(client: KubeClient, node: string): Promise<NodePodProbe | undefined> {
  return found(client.get<NodePodProbe>(NODE_POD_PROBES, node));
}

/** Active pods (not being deleted, not finished) of the label selector, sorted by name. */
export async function activePods(scope: ProbeScope, labelSelector: string): Promise<PodObject[]> {
  const list = await scope.client.list<PodObject>(CoreResources.pods, { namespace: scope.namespace, labelSelector });
  return list.items
    .filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    .sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
}

/** Wait until exactly `count` active pods of the selector run with every container ready and an IP. */
export function runningPods(
  scope: ProbeScope,
  labelSelector: string,
  count: number,
  timeoutMs = 120_000,
): Promise<PodObject[]> {
  return waitFor(
    async () => {
      const pods = await activePods(scope, labelSelector);
      const ready = pods.filter(
        (p) =>
          p.status?.phase === 'Running' &&
          p.status.podIP &&
          (p.status.containerStatuses ?? []).length === (p.spec?.containers.length ?? -1) &&
          (p.status.containerStatuses ?? []).every((s) => s.ready),
      );
      return pods.length === count && ready.length === count ? ready : undefined;
    },
    { timeoutMs, intervalMs: 250, message: `${count} pods ${labelSelector} running and ready` },
  );
}

/**
 * Wait until pod `name` passes `check` (read again every 250 ms); returns it. On timeout the error shows what the pod
 * had last: its conditions other than kubelet's, its labels and annotations.
 */
export async function podShows(
  scope: ProbeScope,
  name: string,
  what: string,
  check: (pod: PodObject) => boolean,
  timeoutMs = 60_000,
): Promise<PodObject> {
  let last: PodObject | undefined;
  try {
    return await waitFor(
      async () => {
        last = await getPod(scope, name);
        return last && check(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 250, message: `pod ${name}: ${what}` },
    );
  } catch (err) {
    const kubelets = new Set(['PodScheduled', 'Initialized', 'Ready', 'ContainersReady', 'PodReadyToStartContainers']);
    const seen = {
      conditions: last?.status?.conditions
        ?.filter((c) => !kubelets.has(c.type))
        .map((c) => ({ type: c.type, status: c.status, message: c.message })),
      labels: last?.metadata?.labels,
      annotations: last?.metadata?.annotations,
    };
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${JSON.stringify(seen)}`, {
      cause: err,
    });
  }
}

export function conditionOf(pod: PodObject | undefined, type: string): WirePodCondition | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type);
}

/** The entry of the pod (by uid) in its node's NodePodProbe spec. */
export async function podProbeEntry(client: KubeClient, pod: PodObject): Promise<PodProbe | undefined> {
  const npp = await getNodePodProbe(client, pod.spec!.nodeName!);
  return npp?.spec?.podProbes?.find((p) => p.uid === pod.metadata!.uid);
}

/** Every NodePodProbe spec entry of `namespace`, over all nodes. */
export async function podProbesOfNamespace(client: KubeClient, namespace: string): Promise<PodProbe[]> {
  const list = await client.list<NodePodProbe>(NODE_POD_PROBES);
  return list.items.flatMap((n) => (n.spec?.podProbes ?? []).filter((p) => p.namespace === namespace));
}

/** Every NodePodProbe status entry of `namespace`, over all nodes. */
export async function probeStatusesOfNamespace(
  client: KubeClient,
  namespace: string,
): Promise<NonNullable<NonNullable<NodePodProbe['status']>['podProbeStatuses']>> {
  const list = await client.list<NodePodProbe>(NODE_POD_PROBES);
  return list.items.flatMap((n) => (n.status?.podProbeStatuses ?? []).filter((p) => p.namespace === namespace));
}

/** The state the agent wrote for probe `probeName` (`<marker>#<probe>`) of the pod, from its node's NodePodProbe. */
export async function probeState(
  client: KubeClient,
  pod: PodObject,
  probeName: string,
): Promise<{ state: string; message?: string } | undefined> {
  const npp = await getNodePodProbe(client, pod.spec!.nodeName!);
  const status = npp?.status?.podProbeStatuses?.find((s) => s.uid === pod.metadata!.uid);
  return status?.probeStates?.find((s) => s.name === probeName);
}

export function hasCleanupFinalizer(marker: PodProbeMarker | undefined): boolean {
  return marker?.metadata.finalizers?.includes(NODE_POD_PROBE_CLEANUP_FINALIZER) ?? false;
}

/** Events of the namespace about object `name` with one of the reasons. */
export async function eventsFor(
  scope: ProbeScope,
  name: string,
  reasons: string[],
): Promise<{ reason?: string; type?: string; message?: string; involvedObject?: { uid?: string } }[]> {
  const list = await scope.client.list<
    KubeObject & { reason?: string; type?: string; message?: string; involvedObject?: { name?: string; uid?: string } }
  >(CoreResources.events, { namespace: scope.namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items.filter((e) => e.reason !== undefined && reasons.includes(e.reason));
}

// ---- acting on pods -----------------------------------------------------------------------------------------------

/** `kubectl exec <pod> -c <container> -- sh -c <script>`; throws with kubectl's output when it does not exit 0. */
export async function shIn(stack: ProbeStack, pod: string, container: string, script: string): Promise<string> {
  return stack.kubectl.ok(['exec', '-n', stack.namespace, pod, '-c', container, '--', 'sh', '-c', script]);
}
