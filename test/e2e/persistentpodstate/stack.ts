// What the PersistentPodState e2e tests share: the controller environment (in-process API emulator with deploy/crds,
// kruise-controller as a real process whose webhooks the emulator calls), a kubelet-lite process running two nodes
// on the local cluster's real containerd, and a test scheduler. There is no scheduler in the local cluster, so the
// test binds pending pods itself, honouring spec.nodeSelector and otherwise taking the first node of an order the
// test sets (so a pod that is not pinned visibly lands elsewhere). StatefulSets are stored but nothing runs them:
// the test creates their pods as the StatefulSet controller would (name <sts>-<ordinal>, controller ownerReference,
// label statefulset.kubernetes.io/pod-name).
import { isNotFound } from '../../../src/kube/errors.js';
import { Informer } from '../../../src/kube/informer/informer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import {
  PERSISTENT_POD_STATES,
  STATEFULSETS,
  type PersistentPodStateObject,
} from '../../../src/controller/persistentpodstate/resources.js';
import { removeKubeletLiteSandboxes } from '../../cluster/kubelet-lite/component.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { startE2eKubeletLite, type E2eKubeletLite } from '../../support/e2e-kubelet-lite.js';
import { waitFor } from '../../support/wait.js';
import { createNamespace, startControllerEnv, type ControllerEnv } from '../controller/controller-env.js';

export const SLEEP_FOREVER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

export interface PodObject extends KubeObject {
  spec?: { nodeName?: string; nodeSelector?: Record<string, string> } & Record<string, unknown>;
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
}

export interface StatefulSetObject extends KubeObject {
  spec?: { replicas?: number } & Record<string, unknown>;
}

export interface PpsStack {
  cluster: ClusterEnv;
  env: ControllerEnv;
  nodes: [string, string];
  namespace: string;
  /** The test scheduler takes the first node of this order that the pod's nodeSelector allows. */
  setScheduleOrder(order: string[]): void;
  kubeletLog(): Promise<string>;
  close(): Promise<void>;
}

export async function startPpsStack(options: { namespace: string; nodes: [string, string] }): Promise<PpsStack> {
  const cluster = await useCluster();
  const env = await startControllerEnv();
  const { client } = env;
  let kubelet: E2eKubeletLite | undefined;
  let scheduler: Informer<PodObject> | undefined;
  const close = async (): Promise<void> => {
    await scheduler?.stop();
    await kubelet?.stop();
    for (const node of options.nodes) {
      await removeKubeletLiteSandboxes(cluster.runtimeSocket, node).catch(() => undefined);
    }
    await env.close();
  };
  try {
    await waitFor(
      async () => {
        await client.list(PERSISTENT_POD_STATES, { namespace: 'default' });
        return true;
      },
      { timeoutMs: 10_000, message: 'PersistentPodStates to be served' },
    );
    await createNamespace(client, options.namespace, { 'kubernetes.io/metadata.name': options.namespace });

    const started = await startE2eKubeletLite({
      cluster,
      kubeconfig: env.kubeconfig,
      nodes: [...options.nodes],
      dir: env.dir,
    });
    kubelet = started;

    let order: string[] = [...options.nodes];
    const nodeLabels = new Map<string, Record<string, string>>();
    for (const node of options.nodes) {
      const n = await client.get<KubeObject>(CoreResources.nodes, node);
      nodeLabels.set(node, n.metadata?.labels ?? {});
    }
    const binding = new Set<string>();
    const bind = (pod: PodObject): void => {
      const name = pod.metadata?.name ?? '';
      if (pod.spec?.nodeName || pod.metadata?.deletionTimestamp || binding.has(pod.metadata?.uid ?? '')) return;
      const selector = pod.spec?.nodeSelector ?? {};
      const target = order.find((node) => Object.entries(selector).every(([k, v]) => nodeLabels.get(node)?.[k] === v));
      if (!target) return; // unschedulable: stays Pending, as with kube-scheduler
      binding.add(pod.metadata?.uid ?? '');
      void fetch(`${env.api.url}/api/v1/namespaces/${options.namespace}/pods/${name}/binding`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace: options.namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: target },
        }),
      }).catch(() => binding.delete(pod.metadata?.uid ?? ''));
    };
    scheduler = new Informer<PodObject>(CoreResources.pods, client, {
      namespace: options.namespace,
      name: 'test-scheduler',
    });
    scheduler.addHandlers({ onAdd: bind, onUpdate: (_, pod) => bind(pod) });
    scheduler.start();
    await scheduler.synced;

    return {
      cluster,
      env,
      nodes: options.nodes,
      namespace: options.namespace,
      setScheduleOrder(next) {
        order = [...next];
      },
      kubeletLog: () => started.log(),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

export function statefulSetManifest(
  namespace: string,
  name: string,
  replicas: number,
  image: string,
  annotations: Record<string, string>,
  podAnnotations: Record<string, string> = {},
): StatefulSetObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, annotations },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: podAnnotations },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image, command: SLEEP_FOREVER }],
        },
      },
    },
  };
}

/** The pod the StatefulSet controller would create for this ordinal (from the template, not yet bound). */
export function statefulSetPod(sts: StatefulSetObject, ordinal: number): PodObject {
  const name = `${sts.metadata!.name!}-${ordinal}`;
  const template = (sts.spec as { template: { metadata: KubeObject['metadata']; spec: Record<string, unknown> } })
    .template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: sts.metadata!.namespace,
      labels: { ...template.metadata?.labels, 'statefulset.kubernetes.io/pod-name': name },
      annotations: { ...template.metadata?.annotations },
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

export function isReady(pod: PodObject | undefined): boolean {
  return !!pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

export async function getOrUndefined<T extends KubeObject>(get: () => Promise<T>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export { PERSISTENT_POD_STATES, STATEFULSETS, type PersistentPodStateObject };
