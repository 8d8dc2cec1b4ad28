// What the launch-priority e2e tests and benchmark share, on the real local cluster (test/support/real-cluster.ts):
// a namespace of their own, kruise-controller on the host (its pod-create webhook called by the real API server
// injects the barrier), the agent as a process inside the first node (restartable, e.g. after SIGKILL), the node's
// real kubelet running the pods (a container blocked on a missing barrier key is retried at kubelet's back-off, or
// at once when the pod changes), a cluster-admin client and a CRI client on the node's containerd. The second node
// runs no agent: the benchmark releases pods there the way OpenKruise's central controller does.
import { CriClient } from '../../../src/cri/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import type { KubeClient } from '../../../src/kube/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import type { AgentProcess } from '../../component/daemon/agent-process.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';

export const SLEEP_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

export interface PodObject extends KubeObject {
  spec?: { nodeName?: string; containers?: Record<string, unknown>[] } & Record<string, unknown>;
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; state?: Record<string, unknown> }[];
  };
}

export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

/** Where the helpers below look: a client and the stack's namespace. */
export interface LaunchScope {
  client: KubeClient;
  namespace: string;
}

export interface LaunchStack extends LaunchScope {
  cluster: RealCluster;
  system: RealSystem;
  /** The node whose agent runs. */
  node: NodeLayout;
  /** A node without our agent (nothing of ours touches its pods). */
  nodeWithoutAgent: NodeLayout;
  /** CRI on the containerd of `node`. */
  cri: CriClient;
  readonly agent: AgentProcess;
  /** SIGKILL the agent (no clean stop) and start a new one on the same node. */
  killAgentAndStartAnother(): Promise<AgentProcess>;
  /** Stop the system and delete the namespace (waiting until its pods are gone). */
  close(): Promise<void>;
}

/** The real cluster with the controller and one agent (on the first node) running, in a namespace of its own. */
export async function startLaunchStack(options: { namespacePrefix: string }): Promise<LaunchStack> {
  const cluster = await useRealCluster();
  const [node, nodeWithoutAgent] = cluster.nodes;
  if (!node || !nodeWithoutAgent) throw new Error('the launch-priority stack needs a cluster of 2 nodes or more');
  const client = cluster.admin;
  const namespace = await createTestNamespace(client, options.namespacePrefix, { forPods: true });
  let system: RealSystem;
  try {
    system = await startSystem(cluster, { nodes: [node] });
  } catch (err) {
    await deleteTestNamespace(client, namespace);
    throw err;
  }
  const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
  let closing: Promise<void> | undefined;
  return {
    cluster,
    system,
    node,
    nodeWithoutAgent,
    client,
    namespace,
    cri,
    get agent() {
      return system.agentProcess(node);
    },
    killAgentAndStartAnother: () => system.restartAgent(node),
    close() {
      closing ??= (async () => {
        await system.stop();
        cri.close();
        await deleteTestNamespace(client, namespace, { waitMs: 120_000 });
      })();
      return closing;
    },
  };
}

export interface ContainerDef {
  name: string;
  priority?: string;
  /** Readiness from a file: exec `test -f /tmp/ready` every second. */
  readyWhenFile?: boolean;
  /** A readiness probe that always passes (exec `true` every second): readiness then comes from kubelet only. */
  probed?: boolean;
}

/** A pod on `node` (kube-scheduler is bypassed: the tests need the node whose agent runs, or the other one). */
export function podManifest(
  node: string,
  containers: ContainerDef[],
  metadata: { name?: string; generateName?: string; annotations?: Record<string, string> },
  image: string,
): PodObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      containers: containers.map((c) => ({
        name: c.name,
        image,
        command: SLEEP_FOREVER,
        ...(c.priority !== undefined && { env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: c.priority }] }),
        ...(c.readyWhenFile && {
          readinessProbe: { exec: { command: ['test', '-f', '/tmp/ready'] }, periodSeconds: 1 },
        }),
        ...(c.probed && { readinessProbe: { exec: { command: ['sh', '-c', 'true'] }, periodSeconds: 1 } }),
      })),
    },
  };
}

export async function getPod(scope: LaunchScope, name: string): Promise<PodObject | undefined> {
  try {
    return await scope.client.get<PodObject>(CoreResources.pods, name, { namespace: scope.namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function getBarrier(scope: LaunchScope, podName: string): Promise<ConfigMapObject | undefined> {
  try {
    return await scope.client.get<ConfigMapObject>(CoreResources.configMaps, `${podName}-barrier`, {
      namespace: scope.namespace,
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function allReady(pod: PodObject | undefined): boolean {
  const statuses = pod?.status?.containerStatuses ?? [];
  return (
    pod?.status?.phase === 'Running' &&
    statuses.length === (pod.spec?.containers?.length ?? -1) &&
    statuses.every((s) => s.ready)
  );
}

/** The runtime's start time (ns since the epoch, as bigint) of each container of the pod, by name (latest instance). */
export async function runtimeStartTimes(cri: CriClient, podUid: string): Promise<Map<string, bigint>> {
  const listed = await cri.listContainers({ filter: { label_selector: { 'io.kubernetes.pod.uid': podUid } } });
  const times = new Map<string, bigint>();
  for (const c of listed.containers) {
    const name = c.labels?.['io.kubernetes.container.name'];
    if (!name) continue;
    const status = await cri.containerStatus({ container_id: c.id });
    const started = BigInt(status.status?.started_at ?? '0');
    if (started > 0n && started > (times.get(name) ?? 0n)) times.set(name, started);
  }
  return times;
}

/** The container id of a running container of the pod. */
export async function containerId(cri: CriClient, podUid: string, name: string): Promise<string | undefined> {
  const listed = await cri.listContainers({
    filter: { label_selector: { 'io.kubernetes.pod.uid': podUid, 'io.kubernetes.container.name': name } },
  });
  return listed.containers.find((c) => c.state === 'CONTAINER_RUNNING')?.id;
}

export async function deletePods(scope: LaunchScope, names: string[]): Promise<void> {
  for (const name of names) {
    await scope.client
      .delete(CoreResources.pods, name, { namespace: scope.namespace, gracePeriodSeconds: 0 })
      .catch(() => undefined);
  }
}
