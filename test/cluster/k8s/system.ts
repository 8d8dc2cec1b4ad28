// Our system on the real local cluster, as deployed: deploy/'s CRDs, namespaces, ServiceAccounts and RBAC applied
// to the real API server (so RBAC is enforced on the agent and the controller), a kubeconfig per ServiceAccount
// (a bound token from the TokenRequest API; the agent's is bound to a placeholder pod on its node, so the API server's
// node-confinement policy sees its node as it sees a DaemonSet pod's), and the command lines that run kruise-daemon inside a node (its network
// and mount namespaces, the node's own CRI socket, the DaemonSet's heap flags) and kruise-controller on the host
// (its admission webhooks reached by URL at the host's node-network address). The workloads that deploy/ runs as a
// DaemonSet and a Deployment run here as processes, so a change to the code needs no image.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';
import type { K8sLayout, NodeLayout } from './layout.js';
import { agentImageGcArgs } from './nodes.js';
import { webhookClientCaPath } from './pki.js';

const here = dirname(fileURLToPath(import.meta.url));
export const AGENT_ENTRY = join(here, '..', '..', '..', 'src', 'cli', 'kruise-daemon.js');
export const CONTROLLER_ENTRY = join(here, '..', '..', '..', 'src', 'cli', 'kruise-controller.js');
export const AGENT_PORT = 10221;
export const SYSTEM_NAMESPACE = 'kruise-system';

/** Kinds of deploy/ that set up the API (types and permissions); the workloads themselves run as processes here. */
const API_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

interface Manifest {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
}

export function kubectl(layout: K8sLayout, args: string[], input?: string): { ok: boolean; out: string } {
  const result = spawnSync('kubectl', args, {
    env: { ...process.env, KUBECONFIG: layout.adminKubeconfig, KUBECACHEDIR: join(layout.k8sDir, 'kubectl-cache') },
    encoding: 'utf8',
    input,
    timeout: 120_000,
  });
  return { ok: result.status === 0, out: `${result.stdout}${result.stderr}`.trim() };
}

/** deploy/overlays/<overlay> rendered by kustomize, as objects. */
export function renderOverlay(layout: K8sLayout, overlay = 'default'): Manifest[] {
  const rendered = kubectl(layout, ['kustomize', join(packageRoot(), 'deploy', 'overlays', overlay)]);
  if (!rendered.ok) throw new Error(`kubectl kustomize deploy/overlays/${overlay} failed: ${rendered.out}`);
  return rendered.out
    .split(/^---$/m)
    .map((doc) => load(doc) as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null && typeof doc === 'object');
}

/**
 * Apply deploy/'s API objects (CRDs, namespaces, ServiceAccounts, RBAC, the node-confinement policy) and wait until
 * the CRDs are served.
 */
export function installApiObjects(layout: K8sLayout, manifests: Manifest[]): void {
  const objects = manifests.filter((m) => m.kind !== undefined && API_KINDS.has(m.kind));
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
  const applied = kubectl(layout, ['apply', '-f', '-'], list);
  if (!applied.ok) throw new Error(`kubectl apply of deploy/'s API objects failed: ${applied.out}`);
  const crds = objects.filter((m) => m.kind === 'CustomResourceDefinition').map((m) => `crd/${m.metadata?.name ?? ''}`);
  const established = kubectl(layout, ['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
  if (!established.ok) throw new Error(`CRDs not established: ${established.out}`);
}

/** The admission webhook configurations kruise-controller registers (by URL here; it writes them at start). */
export const WEBHOOK_CONFIGURATIONS = [
  'mutatingwebhookconfiguration/kruise-mutating-webhook-configuration',
  'validatingwebhookconfiguration/kruise-validating-webhook-configuration',
];

/**
 * Remove them: a controller that died leaves them pointing at a port nobody serves (and pod creation failing); the
 * next controller registers its own.
 */
export function removeWebhookConfigurations(layout: K8sLayout): void {
  const result = kubectl(layout, ['delete', '--ignore-not-found', ...WEBHOOK_CONFIGURATIONS]);
  if (!result.ok) throw new Error(`removing the webhook configurations failed: ${result.out}`);
}

/** The placeholder pod whose bound token the agent of `node` uses (see agentTokenPod). */
export function agentTokenPodName(node: NodeLayout, serviceAccount = 'kruise-daemon'): string {
  return `${serviceAccount}-token-${node.name}`;
}

/**
 * A pod of the kruise-daemon ServiceAccount (or `serviceAccount`, e.g. the agent-only overlay's kruise-daemon-ts) on `node` (kruise-system, host network, no token mounted, `image`: the
 * pause image every node has), created unless it is there already. Our agent runs as a process here, not as the
 * DaemonSet's pod; a token bound to this pod carries the node's name (user extra
 * authentication.kubernetes.io/node-name) as a DaemonSet pod's token does, which deploy/node-confinement requires.
 * Deleting the pod invalidates the token. `serviceAccount`: the agent's (kruise-daemon-ts for deploy/overlays/agent-only).
 */
export function agentTokenPod(
  layout: K8sLayout,
  node: NodeLayout,
  image: string,
  serviceAccount = 'kruise-daemon',
): string {
  const name = agentTokenPodName(node, serviceAccount);
  const existing = kubectl(layout, ['get', 'pod', name, '-n', SYSTEM_NAMESPACE, '-o', 'jsonpath={.spec.nodeName}']);
  if (existing.ok && existing.out === node.name) return name;
  if (existing.ok) {
    const removed = kubectl(layout, ['delete', 'pod', name, '-n', SYSTEM_NAMESPACE, '--wait=true']);
    if (!removed.ok) throw new Error(`deleting pod ${SYSTEM_NAMESPACE}/${name} failed: ${removed.out}`);
  }
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: SYSTEM_NAMESPACE,
      labels: { 'app.kubernetes.io/name': 'kruise-daemon-token', 'app.kubernetes.io/part-of': 'kruise-daemon-test' },
    },
    spec: {
      nodeName: node.name,
      serviceAccountName: serviceAccount,
      automountServiceAccountToken: false,
      hostNetwork: true,
      tolerations: [{ operator: 'Exists' }],
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'placeholder', image, imagePullPolicy: 'IfNotPresent' }],
    },
  };
  const created = kubectl(layout, ['create', '-f', '-'], JSON.stringify(pod));
  if (!created.ok) throw new Error(`creating pod ${SYSTEM_NAMESPACE}/${name} failed: ${created.out}`);
  return name;
}

/**
 * A kubeconfig (0600) for ServiceAccount namespace/name with a bound token from the TokenRequest API, valid for
 * `hours`, bound to pod `boundObject` (of the same namespace) when given: the agent and the controller reach the API
 * with exactly the rights deploy/ grants them. `boundKind` Node binds it to the Node `boundObject` instead (what
 * deploy/node-confinement refuses).
 */
export function serviceAccountKubeconfig(
  layout: K8sLayout,
  namespace: string,
  name: string,
  file: string,
  hours = 24,
  boundObject?: string,
  boundKind: 'Pod' | 'Node' = 'Pod',
): string {
  const bound = boundObject === undefined ? [] : ['--bound-object-kind', boundKind, '--bound-object-name', boundObject];
  const token = kubectl(layout, ['create', 'token', name, '-n', namespace, `--duration=${hours}h`, ...bound]);
  if (!token.ok) throw new Error(`kubectl create token ${name} -n ${namespace} failed: ${token.out}`);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters:
- name: kruise-daemon-test
  cluster:
    server: ${layout.apiServerUrl}
    certificate-authority: ${join(layout.pkiDir, 'ca.crt')}
contexts:
- name: ${name}
  context: {cluster: kruise-daemon-test, user: ${name}, namespace: ${namespace}}
current-context: ${name}
users:
- name: ${name}
  user:
    token: ${token.out.trim()}
`,
    { mode: 0o600 },
  );
  return file;
}

export interface Launch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export interface AgentLaunchOptions {
  holderPid: number;
  kubeconfig: string;
  nodeOptions: string;
  /** Run the kruise-ipam reservation controller (the node's pods are on kruise-ipam). */
  ipam: boolean;
  extraArgs?: string[];
  logLevel?: string;
}

/** kruise-daemon inside `node`: its namespaces, its CRI socket at the usual path, /healthz on the node's address. */
export function agentLaunch(node: NodeLayout, options: AgentLaunchOptions): Launch {
  const args = [
    '-t',
    String(options.holderPid),
    '--mount',
    '--net',
    '--',
    process.execPath,
    AGENT_ENTRY,
    '--addr',
    `${node.ip}:${AGENT_PORT}`,
    '--runtime-socket',
    node.inNode.runtimeSocket,
    ...(options.ipam ? ['--ipam', '--ipam-data-dir', join(node.inNode.cniStateDir, 'kruise-ipam')] : []),
    ...agentImageGcArgs(),
    ...(options.extraArgs ?? []),
  ];
  return {
    command: 'nsenter',
    args,
    env: {
      ...process.env,
      NODE_NAME: node.name,
      KUBECONFIG: options.kubeconfig,
      NODE_OPTIONS: options.nodeOptions,
      LOG_LEVEL: options.logLevel ?? process.env.LOG_LEVEL ?? 'info',
    },
  };
}

/** Where the agents (inside their nodes) reach the controller's pull credentials: the host's node-network address. */
export function pullCredentialsUrl(layout: K8sLayout, port: number): string {
  return `https://${layout.hostIp}:${port}`;
}

export function agentUrl(node: NodeLayout): string {
  return `http://${node.ip}:${AGENT_PORT}`;
}

export interface ControllerLaunchOptions {
  kubeconfig: string;
  statusPort: number;
  webhookPort: number;
  /** The agents' pull-credentials listener (https://<host address>:<port>, agents reach the host there). */
  pullCredentialsPort: number;
  certDir: string;
  extraArgs?: string[];
  logLevel?: string;
}

/**
 * kruise-controller on the host, its webhooks at https://<host address>:<port> (registered by URL), answering only
 * the API server (its webhook client certificate, signed by the pki's webhook client CA).
 */
export function controllerLaunch(layout: K8sLayout, options: ControllerLaunchOptions): Launch {
  return {
    command: process.execPath,
    args: [
      CONTROLLER_ENTRY,
      '--addr',
      `${layout.hostIp}:${options.statusPort}`,
      '--webhook-host',
      layout.hostIp,
      '--webhook-port',
      String(options.webhookPort),
      '--webhook-url-base',
      `https://${layout.hostIp}:${options.webhookPort}`,
      '--webhook-cert-dir',
      options.certDir,
      '--webhook-client-ca',
      webhookClientCaPath(layout),
      '--pull-credentials-port',
      String(options.pullCredentialsPort),
      ...(options.extraArgs ?? []),
    ],
    env: {
      ...process.env,
      KUBECONFIG: options.kubeconfig,
      LOG_LEVEL: options.logLevel ?? process.env.LOG_LEVEL ?? 'info',
    },
  };
}
