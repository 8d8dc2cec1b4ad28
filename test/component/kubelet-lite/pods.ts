// Helpers for kubelet-lite tests: pod manifests with the cluster's test images, API reads, CRI lookups.
import type { CriClient } from '../../../src/cri/index.js';
import type { ContainerStatus__Output, PodSandbox__Output } from '../../../src/cri/types.js';
import { CoreResources, isNotFound, type KubeClient } from '../../../src/kube/index.js';
import type { Container, ContainerStatus, Pod } from '../../cluster/kubelet-lite/types.js';
import { waitFor } from '../../support/wait.js';

export const NAMESPACE = 'default';

/** A shell loop that ends at once on TERM (busybox sh as PID 1 ignores TERM without a trap). */
export const SLEEP_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

export function container(name: string, image: string, extra: Partial<Container> = {}): Container {
  return { name, image, command: SLEEP_FOREVER, ...extra };
}

export function podManifest(
  name: string,
  node: string,
  containers: Container[],
  extra: Partial<Pod['spec']> = {},
  annotations?: Record<string, string>,
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, uid: '', annotations },
    spec: { nodeName: node, terminationGracePeriodSeconds: 5, containers, ...extra },
  } as Pod;
}

export async function createPod(kube: KubeClient, pod: Pod): Promise<Pod> {
  const { uid: _uid, ...metadata } = pod.metadata;
  void _uid;
  const body = { ...structuredClone(pod), metadata } as unknown as Pod;
  return kube.create<Pod>(CoreResources.pods, body, { namespace: pod.metadata.namespace });
}

export async function getPod(kube: KubeClient, name: string): Promise<Pod | undefined> {
  try {
    return await kube.get<Pod>(CoreResources.pods, name, { namespace: NAMESPACE });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function statusOf(pod: Pod | undefined, name: string): ContainerStatus | undefined {
  return pod?.status?.containerStatuses?.find((s) => s.name === name);
}

export function conditionTrue(pod: Pod | undefined, type: string): boolean {
  return pod?.status?.conditions?.find((c) => c.type === type)?.status === 'True';
}

export async function waitForPod(
  kube: KubeClient,
  name: string,
  predicate: (pod: Pod) => boolean,
  message: string,
  timeoutMs = 60_000,
): Promise<Pod> {
  let last: Pod | undefined;
  try {
    return await waitFor(
      async () => {
        last = await getPod(kube, name);
        return last && predicate(last) ? last : undefined;
      },
      { timeoutMs, intervalMs: 50, message: `pod ${name}: ${message}` },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status)}`);
  }
}

export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && conditionTrue(pod, 'Ready');
}

export function containerId(status: ContainerStatus | undefined): string {
  return status?.containerID?.replace(/^containerd:\/\//, '') ?? '';
}

export async function sandboxesOf(cri: CriClient, uid: string): Promise<PodSandbox__Output[]> {
  return (await cri.listPodSandbox({ filter: { label_selector: { 'io.kubernetes.pod.uid': uid } } })).items;
}

export async function criStatus(cri: CriClient, id: string): Promise<ContainerStatus__Output> {
  const r = await cri.containerStatus({ container_id: id });
  if (!r.status) throw new Error(`no status for container ${id}`);
  return r.status;
}

/** Run `sh -c script` in the container; returns stdout (trimmed). */
export async function shell(cri: CriClient, id: string, script: string): Promise<string> {
  const r = await cri.execSync({ container_id: id, cmd: ['sh', '-c', script], timeout: 10 });
  if (r.exit_code !== 0) throw new Error(`exec ${script} exited ${r.exit_code}: ${Buffer.from(r.stderr).toString()}`);
  return Buffer.from(r.stdout).toString('utf8').trim();
}
