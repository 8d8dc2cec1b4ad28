// Our system installed in the real local cluster as users install it: a kustomization written at run time into
// $CLUSTER_DIR/in-cluster/ (deploy/overlays/ip-retention, the image set to $KRUISE_IMAGE, the controller's NodeImage
// creation delay shortened to dev's 1 s) applied with kubectl, then waited for: the agent as deploy/'s DaemonSet
// (in-cluster config through the `kubernetes` Service, the node's CRI socket by hostPath, kruise-ipam copied onto the
// node), the controller as deploy/'s Deployment (2 replicas, leader election, PodDisruptionBudget, its webhooks
// reached through its Service, answering only the API server: deploy/components/webhook-client-ca with the pki's
// webhook client CA as its ConfigMap). Nothing of ours runs as a host process. removeInCluster() takes the workloads, the
// Service, the PDB and the webhook configurations away again (the CRDs, namespaces and RBAC stay: the other tests
// use them).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import { installPluginBundled } from '../../../src/daemon/ipreservation/install.js';
import type { K8sLayout } from './layout.js';
import { webhookClientCaPath } from './pki.js';
import { agentImageGcArgs } from './nodes.js';
import { kubectl, SYSTEM_NAMESPACE, WEBHOOK_CONFIGURATIONS } from './system.js';

export const IN_CLUSTER_OVERLAY = 'ip-retention';
export const AGENT_DAEMONSET = 'kruise-daemon';
export const CONTROLLER_DEPLOYMENT = 'kruise-controller';
/** The controller's leader-election Lease (kruise-system). */
export const CONTROLLER_LEASE = 'kruise-controller';

/** `registry:port/name:tag` as kustomize's image fields. */
export function splitImage(ref: string): { newName: string; newTag: string } {
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon <= slash) throw new Error(`image ${ref} has no tag`);
  return { newName: ref.slice(0, colon), newTag: ref.slice(colon + 1) };
}

export function inClusterDir(clusterDir: string): string {
  return join(clusterDir, 'in-cluster');
}

/** The file (in the kustomization's directory) the ConfigMap kruise-webhook-client-ca is generated from. */
const WEBHOOK_CLIENT_CA_FILE = 'webhook-client-ca.crt';

/** The kustomization's text: `resources` relative to `dir` (kustomize refuses absolute bases in some versions). */
export function inClusterKustomization(dir: string, image: string): string {
  const overlay = relative(dir, join(packageRoot(), 'deploy', 'overlays', IN_CLUSTER_OVERLAY));
  const clientCa = relative(dir, join(packageRoot(), 'deploy', 'components', 'webhook-client-ca'));
  const { newName, newTag } = splitImage(image);
  return `# Written by test/cluster/k8s/in-cluster.ts: deploy/overlays/${IN_CLUSTER_OVERLAY} with this cluster's image.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ${overlay}
# the webhooks answer only the API server (its webhook client certificate, signed by this cluster's webhook client CA)
components:
  - ${clientCa}
configMapGenerator:
  - name: kruise-webhook-client-ca
    namespace: kruise-system
    files:
      - ca.crt=${WEBHOOK_CLIENT_CA_FILE}
    options:
      disableNameSuffixHash: true
images:
  - name: kruise-daemon
    newName: ${newName}
    newTag: "${newTag}"
patches:
  # as npm run dev: NodeImages 1 s after a node is seen, not 30 s
  - target: {group: apps, version: v1, kind: Deployment, name: ${CONTROLLER_DEPLOYMENT}}
    patch: |-
      - op: replace
        path: /spec/template/spec/containers/0/args/3
        value: --nodeimage-creation-delay=1s
  # the agents are told the nodes' kubelet image GC thresholds (k8s/nodes.ts: the disk is the host's, shared)
  - target: {group: apps, version: v1, kind: DaemonSet, name: kruise-daemon}
    patch: |-
${agentImageGcArgs()
  .map((arg) => `      - op: add\n        path: /spec/template/spec/containers/0/args/-\n        value: ${arg}`)
  .join('\n')}
`;
}

/**
 * Write the kustomization and a copy of the webhook client CA (kustomize reads files only below the kustomization)
 * into the cluster directory; returns its directory.
 */
export function writeInClusterKustomization(clusterDir: string, image: string, webhookClientCaPem: string): string {
  const dir = inClusterDir(clusterDir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, WEBHOOK_CLIENT_CA_FILE), webhookClientCaPem);
  writeFileSync(join(dir, 'kustomization.yaml'), inClusterKustomization(dir, image));
  return dir;
}

function must(layout: K8sLayout, args: string[], what: string): string {
  const result = kubectl(layout, args);
  if (!result.ok) throw new Error(`${what} failed: ${result.out}`);
  return result.out;
}

/**
 * Apply the kustomization and wait until the DaemonSet has a Ready agent on every node and the Deployment both
 * replicas Ready (`kubectl rollout status`).
 */
export function applyInCluster(layout: K8sLayout, clusterDir: string, image: string, timeoutSeconds = 180): void {
  const dir = writeInClusterKustomization(clusterDir, image, readFileSync(webhookClientCaPath(layout), 'utf8'));
  // the webhook configurations a host-process controller registered by URL: deploy/'s name the Service
  must(layout, ['delete', '--ignore-not-found', ...WEBHOOK_CONFIGURATIONS], 'removing old webhook configurations');
  must(layout, ['apply', '-k', dir], `kubectl apply -k ${dir}`);
  waitRollout(layout, timeoutSeconds);
}

export function waitRollout(layout: K8sLayout, timeoutSeconds = 180): void {
  for (const workload of [`ds/${AGENT_DAEMONSET}`, `deploy/${CONTROLLER_DEPLOYMENT}`]) {
    must(
      layout,
      ['rollout', 'status', '-n', SYSTEM_NAMESPACE, workload, `--timeout=${timeoutSeconds}s`],
      `rollout of ${workload}`,
    );
  }
}

/** What applyInCluster added that runs or serves (not the API objects the host-process mode uses too). */
const IN_CLUSTER_OBJECTS = [
  `daemonset/${AGENT_DAEMONSET}`,
  `deployment/${CONTROLLER_DEPLOYMENT}`,
  'service/kruise-controller-webhook',
  'configmap/kruise-webhook-client-ca',
  'poddisruptionbudget/kruise-controller',
];

/**
 * Remove the workloads (their pods stop with SIGTERM, waited for), the Service, the PDB and the webhook
 * configurations, and the kustomization directory. `restoreHostPlugin`: point each node's kruise-ipam wrapper back
 * at this checkout's plugin (what `up` installs), since the agent's copy came from the image.
 */
export function removeInCluster(layout: K8sLayout, clusterDir: string, restoreHostPlugin: boolean): void {
  must(
    layout,
    ['delete', '-n', SYSTEM_NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=60s', ...IN_CLUSTER_OBJECTS],
    'deleting the in-cluster workloads',
  );
  // the garbage collector deletes the pods after their owners; none left is what `wait` calls "no matching resources"
  const gone = kubectl(layout, [
    'wait',
    '--for=delete',
    '-n',
    SYSTEM_NAMESPACE,
    'pod',
    '-l',
    'control-plane in (daemon,controller)',
    '--timeout=60s',
  ]);
  if (!gone.ok && !/no matching resources/i.test(gone.out)) throw new Error(`waiting for the pods to go: ${gone.out}`);
  must(layout, ['delete', '--ignore-not-found', ...WEBHOOK_CONFIGURATIONS], 'removing the webhook configurations');
  must(
    layout,
    ['delete', 'lease', '-n', SYSTEM_NAMESPACE, '--ignore-not-found', CONTROLLER_LEASE],
    'removing the leader Lease',
  );
  if (restoreHostPlugin) {
    for (const node of layout.nodes) installPluginBundled(node.hostPaths.cniBinDir, { copyNode: false });
  }
  rmSync(inClusterDir(clusterDir), { recursive: true, force: true });
}

export interface PodRow {
  name: string;
  node: string;
  uid: string;
  ready: boolean;
  deleting: boolean;
  /** The runtime's ID of each started container by name (containerStatuses' containerID, its `containerd://` cut). */
  containerIds: Record<string, string>;
}

/** Pods of `control-plane=<role>` in kruise-system. */
export function systemPods(layout: K8sLayout, role: 'daemon' | 'controller'): PodRow[] {
  const out = must(
    layout,
    ['get', 'pods', '-n', SYSTEM_NAMESPACE, '-l', `control-plane=${role}`, '-o', 'json'],
    `listing the ${role} pods`,
  );
  const list = JSON.parse(out) as {
    items: {
      metadata: { name: string; uid: string; deletionTimestamp?: string };
      spec: { nodeName?: string };
      status?: {
        conditions?: { type: string; status: string }[];
        containerStatuses?: { name: string; containerID?: string }[];
      };
    }[];
  };
  return list.items.map((p) => ({
    name: p.metadata.name,
    uid: p.metadata.uid,
    node: p.spec.nodeName ?? '',
    ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    deleting: p.metadata.deletionTimestamp !== undefined,
    containerIds: Object.fromEntries(
      (p.status?.containerStatuses ?? []).flatMap((c) =>
        c.containerID ? [[c.name, c.containerID.replace(/^[a-z-]+:\/\//, '')]] : [],
      ),
    ),
  }));
}
