// What the image tests on the real cluster share: a fresh namespace per test file (gone again after it, ImagePullJob
// finalizers included), RBAC objects (the pull-secret reader ClusterRole bound in a namespace, as docs/controller.md
// tells an admin; a ServiceAccount of the test's own with its kubeconfig), events since a moment, and a registry
// proxy that the nodes reach (on the host's node-network address, with a plain-http certs.d entry in every node).
import { join } from 'node:path';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../src/api/imagepulljob.js';
import type { KubeClient } from '../../src/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CoreResources, type ResourceType } from '../../src/kube/resource.js';
import { serviceAccountKubeconfig } from '../cluster/k8s/system.js';
import { SERVICE_ACCOUNTS } from './kube-resources.js';
import type { RealCluster } from './real-cluster.js';
import { startRegistryProxy, writeContainerdHosts, writeCrioRegistry, type RegistryProxy } from './registry-proxy.js';
import { nodeRuntimeProcess } from '../cluster/k8s/nodes.js';
import type { NodeLayout } from '../cluster/k8s/layout.js';
import { waitFor } from './wait.js';

const RBAC = 'rbac.authorization.k8s.io';
export const ROLES: ResourceType = { group: RBAC, version: 'v1', resource: 'roles', namespaced: true, kind: 'Role' };
export const ROLE_BINDINGS: ResourceType = {
  group: RBAC,
  version: 'v1',
  resource: 'rolebindings',
  namespaced: true,
  kind: 'RoleBinding',
};
export const CLUSTER_ROLE_BINDINGS: ResourceType = {
  group: RBAC,
  version: 'v1',
  resource: 'clusterrolebindings',
  namespaced: false,
  kind: 'ClusterRoleBinding',
};

export const CONTROLLER_SUBJECT = { kind: 'ServiceAccount', name: 'kruise-controller', namespace: 'kruise-system' };
export const PULL_SECRET_READER = 'kruise-controller-pull-secret-reader';

export interface CoreEvent extends KubeObject {
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  involvedObject: { kind?: string; name?: string; namespace?: string; uid?: string };
}

/** Ignore "already exists" (a test run again on a cluster that was kept up). */
export async function createOrKeep<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  object: T,
): Promise<void> {
  await client.create(rt, object, { namespace: object.metadata?.namespace }).catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });
}

/**
 * Delete the namespace and wait until it is gone. ImagePullJobs still holding the controller's finalizer (a run whose
 * controller was killed) are let go, or kube-controller-manager's namespace controller would wait forever.
 */
export async function removeNamespace(admin: KubeClient, name: string, timeoutMs = 90_000): Promise<void> {
  const exists = async (): Promise<boolean> => {
    try {
      await admin.get(CoreResources.namespaces, name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };
  if (!(await exists())) return;
  await admin.delete(CoreResources.namespaces, name).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
  await waitFor(
    async () => {
      const jobs = await admin.list<ImagePullJob>(IMAGE_PULL_JOBS, { namespace: name });
      for (const job of jobs.items) {
        if (!job.metadata.deletionTimestamp || !job.metadata.finalizers?.length) continue;
        await admin
          .patch(
            IMAGE_PULL_JOBS,
            job.metadata.name ?? '',
            { metadata: { finalizers: null } },
            {
              type: 'merge',
              namespace: name,
            },
          )
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
      return !(await exists());
    },
    { timeoutMs, intervalMs: 500, message: `namespace ${name} to be gone` },
  );
}

/** A namespace of the test file's own, created empty (one left by an earlier run is removed first). */
export async function freshNamespace(
  admin: KubeClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await removeNamespace(admin, name);
  await admin.create(CoreResources.namespaces, { metadata: { name, labels } });
}

/** What `kubectl create rolebinding kruise-controller-pull-secret-reader ... -n NS` makes (docs/controller.md). */
export async function grantPullSecretReader(admin: KubeClient, namespace: string): Promise<void> {
  await createOrKeep(admin, ROLE_BINDINGS, {
    metadata: { name: PULL_SECRET_READER, namespace },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: PULL_SECRET_READER },
    subjects: [CONTROLLER_SUBJECT],
  } as KubeObject);
}

/** The tightest grant of docs/controller.md: a Role naming the secrets (get, list, watch), bound to the controller. */
export async function grantNamedSecrets(admin: KubeClient, namespace: string, names: string[]): Promise<void> {
  const name = 'kruise-controller-pull-secrets';
  await createOrKeep(admin, ROLES, {
    metadata: { name, namespace },
    rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: names, verbs: ['get', 'list', 'watch'] }],
  } as KubeObject);
  await createOrKeep(admin, ROLE_BINDINGS, {
    metadata: { name, namespace },
    roleRef: { apiGroup: RBAC, kind: 'Role', name },
    subjects: [CONTROLLER_SUBJECT],
  } as KubeObject);
}

/** A ServiceAccount of the test's own in `namespace` and a kubeconfig with a bound token for it. */
export async function testServiceAccount(cluster: RealCluster, namespace: string, name: string): Promise<string> {
  await createOrKeep(cluster.admin, SERVICE_ACCOUNTS, { metadata: { name, namespace } });
  return serviceAccountKubeconfig(
    cluster.layout,
    namespace,
    name,
    join(cluster.layout.k8sDir, 'credentials', `${namespace}-${name}.kubeconfig`),
  );
}

/** Events of `namespace` seen at or after `sinceMs` (their last occurrence; second precision). */
export async function eventsSince(admin: KubeClient, namespace: string, sinceMs: number): Promise<CoreEvent[]> {
  const from = Math.floor(sinceMs / 1000) * 1000;
  const list = await admin.list<CoreEvent>(CoreResources.events, { namespace });
  return list.items.filter((e) => Date.parse(e.lastTimestamp ?? e.eventTime ?? '') >= from);
}

export interface NodeRegistryProxy {
  proxy: RegistryProxy;
  close(): Promise<void>;
}

/** A registry proxy in front of the cluster's registry that every node's containerd pulls from over plain http. */
export async function nodeRegistryProxy(cluster: RealCluster): Promise<NodeRegistryProxy> {
  const proxy = await startRegistryProxy(cluster.registry, cluster.layout.hostIp);
  const removers: (() => Promise<void>)[] = [];
  for (const node of cluster.nodes) removers.push(await writeNodeRegistry(node, proxy.host));
  return {
    proxy,
    async close() {
      for (const remove of removers) await remove();
      await proxy.close();
    },
  };
}

/**
 * A plain-http registry `host` in one node's runtime, serving `registry`'s images (itself by default): a certs.d
 * hosts.toml for containerd (read at every pull), a registries.conf.d drop-in and a SIGHUP for CRI-O. Returns the
 * remover.
 */
export async function writeNodeRegistry(node: NodeLayout, host: string, registry = host): Promise<() => Promise<void>> {
  const runtime = nodeRuntimeProcess(node);
  return runtime.name.endsWith('/crio')
    ? await writeCrioRegistry(node.crio.registriesConfDir, runtime, host, registry)
    : await writeContainerdHosts(node.containerdCertsDir, host, registry);
}

/** NodeImage key and tag of an image reference (`10.X.255.1:PORT/test/busybox`, `1.0`). */
export function splitReference(ref: string): { image: string; tag: string } {
  const i = ref.lastIndexOf(':');
  return { image: ref.slice(0, i), tag: ref.slice(i + 1) };
}
