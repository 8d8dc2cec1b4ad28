// What the CRR e2e tests and benchmark share: the local cluster's real containerd and registries, an in-process API
// emulator with deploy/crds, the controller as a real process (its CRR webhook is called by the emulator, its CRR
// housekeeping runs), a kubelet-lite process running one node against the emulator, the agent as a real process on
// that node (restartable, e.g. after SIGKILL), a test client and a CRI client.
import type { ContainerRecreateRequest } from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import { CRR_RESOURCE } from '../../../src/daemon/containerrecreate/controller.js';
import { CriClient } from '../../../src/cri/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import type { KubeClient } from '../../../src/kube/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { removeKubeletLiteSandboxes } from '../../cluster/kubelet-lite/component.js';
import { AgentProcess } from '../../component/daemon/agent-process.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { startE2eKubeletLite } from '../../support/e2e-kubelet-lite.js';
import { waitFor } from '../../support/wait.js';
import { startControllerEnv, type ControllerEnv } from '../controller/controller-env.js';

export const NAMESPACE = 'default';
/** PID 1 that logs SIGTERM to its stdout (the container log) and exits. */
export const SLEEP_FOREVER = ['sh', '-c', 'trap "echo TERM; exit 0" TERM; while true; do sleep 1; done'];

export type PodObject = WirePod & KubeObject;
export type CrrObject = ContainerRecreateRequest & KubeObject;

export interface CrrStack {
  cluster: ClusterEnv;
  env: ControllerEnv;
  node: string;
  client: KubeClient;
  cri: CriClient;
  agent: AgentProcess;
  /** SIGKILL the agent (if running) and start a new one. */
  restartAgent(signal?: NodeJS.Signals): Promise<AgentProcess>;
  kubeletLog(): Promise<string>;
  close(): Promise<void>;
}

export async function startCrrStack(
  node: string,
  agentEnv: Record<string, string> = {},
  controllerArgs: string[] = [],
): Promise<CrrStack> {
  const cluster = await useCluster();
  const env = await startControllerEnv();
  await env.startController(controllerArgs);
  const cri = new CriClient({ socket: cluster.runtimeSocket });
  const kubelet = await startE2eKubeletLite({ cluster, kubeconfig: env.kubeconfig, nodes: [node], dir: env.dir });
  const startAgent = async (): Promise<AgentProcess> => {
    const agent = new AgentProcess({
      args: ['--addr', '127.0.0.1:0'],
      env: {
        NODE_NAME: node,
        KUBECONFIG: env.kubeconfig,
        RUNTIME_SOCKET: cluster.runtimeSocket,
        LOG_LEVEL: 'info',
        ...agentEnv,
      },
    });
    await agent.baseUrl();
    return agent;
  };
  const stack: CrrStack = {
    cluster,
    env,
    node,
    client: env.client,
    cri,
    agent: await startAgent(),
    async restartAgent(signal = 'SIGKILL') {
      stack.agent.child.kill(signal);
      await stack.agent.exited;
      stack.agent = await startAgent();
      return stack.agent;
    },
    kubeletLog: () => kubelet.log(),
    async close() {
      await stack.agent.stop();
      await kubelet.stop();
      await removeKubeletLiteSandboxes(cluster.runtimeSocket, node).catch(() => undefined);
      cri.close();
      await env.close();
    },
  };
  return stack;
}

export async function getPod(client: KubeClient, name: string): Promise<PodObject | undefined> {
  try {
    return await client.get<PodObject>(CoreResources.pods, name, { namespace: NAMESPACE });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function getCrr(client: KubeClient, name: string): Promise<CrrObject | undefined> {
  try {
    return await client.get<CrrObject>(CRR_RESOURCE, name, { namespace: NAMESPACE });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Create the pod and wait until every container runs and is ready. */
export async function runPod(client: KubeClient, pod: PodObject, timeoutMs = 60_000): Promise<PodObject> {
  await client.create(CoreResources.pods, pod, { namespace: NAMESPACE });
  const name = pod.metadata!.name!;
  return waitFor(
    async () => {
      const p = await getPod(client, name);
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
  client: KubeClient,
  name: string,
  spec: ContainerRecreateRequest['spec'],
): Promise<CrrObject> {
  return client.create<CrrObject>(
    CRR_RESOURCE,
    {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name, namespace: NAMESPACE },
      spec,
    },
    { namespace: NAMESPACE },
  );
}

export function waitCompleted(client: KubeClient, name: string, timeoutMs = 60_000): Promise<CrrObject> {
  return waitFor(() => getCrr(client, name).then((c) => (c?.status?.phase === 'Completed' ? c : undefined)), {
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

export function bareId(containerID: string | undefined): string {
  return (containerID ?? '').replace(/^[a-z]+:\/\//, '');
}
