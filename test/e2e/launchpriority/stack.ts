// What the launch-priority e2e tests and benchmark share: the local cluster's real containerd and registries, an
// in-process API emulator whose pod-create admission reaches the launch-priority webhook (the kruise-controller
// process, or the same handler in process), a kubelet-lite
// process running one node of its own against that emulator (kubelet's timers: a blocked container is retried
// after 10-15 s unless the pod changes), the agent as a real process on that node, a test client and a CRI client.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POD_MUTATING_WEBHOOK_NAME } from '../../../src/controller/webhooks/launchpriority/webhook.js';
import { mutatePodForLaunchPriority } from '../../../src/controller/webhooks/launchpriority/pod-mutation.js';
import { CriClient } from '../../../src/cri/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { KubeClient } from '../../../src/kube/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { admissionDenied, startApiServer, writeKubeconfig, type ApiServer } from '../../cluster/apiserver/index.js';
import { removeKubeletLiteSandboxes } from '../../cluster/kubelet-lite/component.js';
import type { KubeObject as EmulatorObject } from '../../cluster/apiserver/types.js';
import { AgentProcess } from '../../component/daemon/agent-process.js';
import { applyCrds } from '../controller/controller-env.js';
import { ensureNamespace } from '../../support/test-namespace.js';
import { ControllerProcess, freePort } from '../controller/controller-process.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { startE2eKubeletLite } from '../../support/e2e-kubelet-lite.js';

export const NAMESPACE = 'default';
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

export interface LaunchStack {
  cluster: ClusterEnv;
  api: ApiServer;
  node: string;
  client: KubeClient;
  cri: CriClient;
  readonly agent: AgentProcess;
  /** SIGKILL the agent (no clean stop) and start a new one on the same node. */
  killAgentAndStartAnother(): Promise<AgentProcess>;
  /** The kruise-controller process serving the webhook (absent with `webhook: 'in-process'`). */
  controller?: ControllerProcess;
  kubeletLog(): Promise<string>;
  close(): Promise<void>;
}

export interface LaunchStackOptions {
  node: string;
  /**
   * Who answers pod-create admission: the real kruise-controller process through the emulator's webhook caller
   * (HTTPS, MutatingWebhookConfiguration it registers), or the same handler as an in-process admission plugin.
   */
  webhook?: 'controller' | 'in-process';
  /** Run the agent (default true; false measures the same pods without it). */
  agent?: boolean;
  /** kubelet-lite timer scale (default 1: kubelet's own 10-15 s retry). */
  timeScale?: number;
}

export async function startLaunchStack(options: LaunchStackOptions): Promise<LaunchStack> {
  const cluster = await useCluster();
  const api = await startApiServer({ bookmarkIntervalMs: 5_000 });
  const dir = await mkdtemp(join(tmpdir(), 'kd-launchpriority-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfig, api.url);
  const client = new KubeClient(
    { server: api.url, insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: `emulator ${api.url}` },
    { userAgent: 'kd-launchpriority-test', timeoutMs: 10_000 },
  );
  let controller: ControllerProcess | undefined;
  let removeWebhook = (): void => undefined;
  if (options.webhook === 'in-process')
    removeWebhook = api.admission.add({
      name: POD_MUTATING_WEBHOOK_NAME,
      mutate(request) {
        const result = mutatePodForLaunchPriority({
          operation: request.operation,
          resource: request.resource,
          subResource: request.subResource,
          namespace: request.namespace,
          object: request.object,
        });
        if (!result.allowed) throw admissionDenied(request, POD_MUTATING_WEBHOOK_NAME, result.message, result.code);
        return result.object as EmulatorObject | undefined;
      },
    });
  else {
    await applyCrds(client);
    await ensureNamespace(client, 'kruise-system');
    controller = new ControllerProcess({
      kubeconfig,
      statusPort: await freePort(),
      webhookPort: await freePort(),
      certDir: join(dir, 'controller-certs'),
    });
    await controller.ready();
  }
  const cri = new CriClient({ socket: cluster.runtimeSocket });

  const kubelet = await startE2eKubeletLite({
    cluster,
    kubeconfig,
    nodes: [options.node],
    dir,
    timeScale: options.timeScale,
  });

  const startAgent = async (): Promise<AgentProcess> => {
    const started = new AgentProcess({
      args: ['--addr', '127.0.0.1:0'],
      env: {
        NODE_NAME: options.node,
        KUBECONFIG: kubeconfig,
        RUNTIME_SOCKET: cluster.runtimeSocket,
        LOG_LEVEL: 'info',
      },
    });
    await started.baseUrl();
    return started;
  };
  let agent = options.agent === false ? undefined : await startAgent();

  return {
    cluster,
    api,
    node: options.node,
    client,
    cri,
    get agent(): AgentProcess {
      if (!agent) throw new Error('this stack runs without the agent');
      return agent;
    },
    async killAgentAndStartAnother() {
      agent?.child.kill('SIGKILL');
      await agent?.exited;
      agent = await startAgent();
      return agent;
    },
    kubeletLog: () => kubelet.log(),
    controller,
    async close() {
      await agent?.stop();
      await controller?.stop();
      await kubelet.stop();
      await removeKubeletLiteSandboxes(cluster.runtimeSocket, options.node).catch(() => undefined);
      removeWebhook();
      cri.close();
      client.close();
      await api.close();
      await rm(dir, { recursive: true, force: true });
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

export function podManifest(
  node: string,
  containers: ContainerDef[],
  metadata: { name?: string; generateName?: string; annotations?: Record<string, string> },
  image: string,
): PodObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, namespace: NAMESPACE },
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

export async function getPod(client: KubeClient, name: string): Promise<PodObject | undefined> {
  try {
    return await client.get<PodObject>(CoreResources.pods, name, { namespace: NAMESPACE });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function getBarrier(client: KubeClient, podName: string): Promise<ConfigMapObject | undefined> {
  try {
    return await client.get<ConfigMapObject>(CoreResources.configMaps, `${podName}-barrier`, { namespace: NAMESPACE });
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

export async function deletePods(client: KubeClient, names: string[]): Promise<void> {
  for (const name of names) {
    await client
      .delete(CoreResources.pods, name, { namespace: NAMESPACE, gracePeriodSeconds: 0 })
      .catch(() => undefined);
  }
}
