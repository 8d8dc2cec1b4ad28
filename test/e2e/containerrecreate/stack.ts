// What the CRR e2e tests and benchmark share, on the real local cluster (test/support/real-cluster.ts): a namespace
// of their own, our system as deployed (kruise-controller on the host, its CRR webhook called by the real API
// server, its CRR housekeeping running; the agent as a process inside one real node, restartable e.g. after
// SIGKILL), the node's real kubelet running the pods (it starts a stopped container again), a cluster-admin client
// and a CRI client on the node's containerd.
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  type ContainerRecreateRequest,
  CONTAINER_RECREATE_REQUESTS,
} from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import { CriClient } from '../../../src/cri/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import type { KubeClient } from '../../../src/kube/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import type { AgentProcess } from '../../component/daemon/agent-process.js';
import { deleteTestNamespace, ensureNamespace, waitForDefaultServiceAccount } from '../../support/test-namespace.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';

/** PID 1 that logs SIGTERM to its stdout (the container log) and exits. */
export const SLEEP_FOREVER = ['sh', '-c', 'trap "echo TERM; exit 0" TERM; while true; do sleep 1; done'];

export type PodObject = WirePod & KubeObject;
/** Where the helpers below look: a client and the stack's namespace. */
export interface CrrScope {
  client: KubeClient;
  namespace: string;
}

export interface CrrStack extends CrrScope {
  cluster: RealCluster;
  system: RealSystem;
  /** The node whose agent runs (the pods of the tests name it). */
  node: NodeLayout;
  cri: CriClient;
  /** The agent on `node` as it runs now. */
  readonly agent: AgentProcess;
  /** Kill the agent (SIGKILL by default), wait for its exit and start a new one on the node. */
  restartAgent(signal?: NodeJS.Signals): Promise<AgentProcess>;
  /** A file of the node (a path as seen inside it, e.g. a container's CRI log_path), read from the host. */
  readNodeFile(inNodePath: string): Promise<string>;
  /** Stop the system and delete the namespace (once; later calls wait for the first). */
  close(): Promise<void>;
}

export interface CrrStackOptions {
  /** A namespace the stack creates (and deletes at close). */
  namespace: string;
  controllerArgs?: string[];
  agentEnv?: Record<string, string>;
}

/** The real cluster with our system running on its first node; `close()` stops the system, removes the namespace. */
export async function startCrrStack(options: CrrStackOptions): Promise<CrrStack> {
  const cluster = await useRealCluster();
  const node = cluster.nodes[0]!;
  const { namespace } = options;
  const client = cluster.admin;
  await createNamespace(client, namespace);
  let system: RealSystem;
  try {
    system = await startSystem(cluster, {
      nodes: [node],
      controllerArgs: options.controllerArgs,
      agentEnv: options.agentEnv,
    });
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
    client,
    namespace,
    cri,
    get agent() {
      return system.agentProcess(node);
    },
    restartAgent: (signal) => system.restartAgent(node, signal),
    readNodeFile: (inNodePath) => readFile(hostPathOf(node, inNodePath), 'utf8'),
    close() {
      closing ??= (async () => {
        await system.stop();
        cri.close();
        await deleteTestNamespace(client, namespace);
      })();
      return closing;
    },
  };
}

/** The host path of a path inside the node, through the node's bind mounts. */
export function hostPathOf(node: NodeLayout, inNodePath: string): string {
  for (const bind of node.binds) {
    const rest = relative(bind.target, inNodePath);
    if (rest === '' || (!rest.startsWith('..') && !rest.startsWith('/'))) return join(bind.source, rest);
  }
  throw new Error(`${inNodePath} is not on a bind mount of ${node.name}`);
}

/** The object, or undefined when the API answers 404. */
async function found<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Create the namespace afresh (one left by an earlier run on a cluster kept up is deleted first, and waited for) and
 * wait for its `default` ServiceAccount (pods are refused without it).
 */
async function createNamespace(client: KubeClient, namespace: string): Promise<void> {
  await deleteTestNamespace(client, namespace, { waitMs: 120_000 });
  await ensureNamespace(client, namespace);
  await waitForDefaultServiceAccount(client, namespace);
}

export function getPod(scope: CrrScope, name: string): Promise<PodObject | undefined> {
  return found(scope.client.get<PodObject>(CoreResources.pods, name, { namespace: scope.namespace }));
}

export function getCrr(scope: CrrScope, name: string): Promise<ContainerRecreateRequest | undefined> {
  return found(
    scope.client.get<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, name, { namespace: scope.namespace }),
  );
}

/** Create the pod (in the scope's namespace) and wait until every container runs and is ready. */
export async function runPod(scope: CrrScope, pod: PodObject, timeoutMs = 90_000): Promise<PodObject> {
  await scope.client.create(CoreResources.pods, pod, { namespace: scope.namespace });
  const name = pod.metadata!.name!;
  return waitFor(
    async () => {
      const p = await getPod(scope, name);
      const statuses = p?.status?.containerStatuses ?? [];
      const want = pod.spec?.containers.length ?? 0;
      return statuses.length === want && statuses.every((s) => s.ready && s.state?.running) && p?.status?.podIP
        ? p
        : undefined;
    },
    { timeoutMs, message: `pod ${name} running and ready` },
  );
}

export function createCrr(
  scope: CrrScope,
  name: string,
  spec: ContainerRecreateRequest['spec'],
): Promise<ContainerRecreateRequest> {
  return scope.client.create<ContainerRecreateRequest>(
    CONTAINER_RECREATE_REQUESTS,
    {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name, namespace: scope.namespace },
      spec,
    },
    { namespace: scope.namespace },
  );
}

export function waitCompleted(scope: CrrScope, name: string, timeoutMs = 60_000): Promise<ContainerRecreateRequest> {
  return waitFor(() => getCrr(scope, name).then((c) => (c?.status?.phase === 'Completed' ? c : undefined)), {
    timeoutMs,
    message: `CRR ${name} Completed`,
  });
}

export function containerStatus(
  pod: PodObject,
  name: string,
): NonNullable<NonNullable<PodObject['status']>['containerStatuses']>[number] {
  const cs = pod.status?.containerStatuses?.find((s) => s.name === name);
  if (!cs) throw new Error(`pod ${pod.metadata?.name} has no status for container ${name}`);
  return cs;
}

/**
 * What a workload controller does for an in-place update: the pod's InPlaceUpdateReady condition set False (beside
 * the conditions `pod` had), then `metadata` (new labels or annotations) merged into the pod.
 */
export async function startInPlaceUpdate(
  scope: CrrScope,
  pod: PodObject,
  metadata: Record<string, unknown>,
): Promise<void> {
  const name = pod.metadata!.name!;
  await scope.client.patch(
    CoreResources.pods,
    name,
    {
      status: {
        conditions: [
          ...(pod.status?.conditions ?? []),
          {
            type: 'InPlaceUpdateReady',
            status: 'False',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    },
    { type: 'merge', namespace: scope.namespace, subresource: 'status' },
  );
  await scope.client.patch(CoreResources.pods, name, { metadata }, { type: 'merge', namespace: scope.namespace });
}

export function bareId(containerID: string | undefined): string {
  return (containerID ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
}
