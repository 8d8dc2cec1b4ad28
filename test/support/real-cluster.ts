// The real local Kubernetes cluster for tests: useRealCluster() brings it up once per process (2 nodes, pods on
// kruise-ipam, deploy/'s CRDs, namespaces, ServiceAccounts and RBAC applied) in REAL_CLUSTER_DIR (default
// <repo>/.cluster-real). If this run started it, it is stopped at the end of the run; one already up is left running.
// startSystem() runs our agent on each node (inside the node's namespaces, with a kruise-daemon ServiceAccount token
// bound to a placeholder pod on that node, as deploy/node-confinement requires) and the controller on the host (kruise-controller's token), as deploy/ runs them: one system at a time.
// startInClusterSystem() instead installs deploy/overlays/ip-retention with the cluster's image: the DaemonSet and the
// Deployment, nothing on the host.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../src/util/repo-root.js';
import { CriClient } from '../../src/cri/client.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeconfig } from '../../src/kube/credentials/kubeconfig.js';
import { downCluster, isClusterUp, upCluster } from '../cluster/components.js';
import { layoutFromContext } from '../cluster/k8s/context.js';
import type { K8sLayout, NodeLayout } from '../cluster/k8s/layout.js';
import { daemonSetNodeOptions } from '../cluster/deployed-agent.js';
import { agentImageGcArgs } from '../cluster/k8s/nodes.js';
import {
  agentTokenPod,
  installApiObjects,
  removeWebhookConfigurations,
  renderOverlay,
  serviceAccountKubeconfig,
  SYSTEM_NAMESPACE,
} from '../cluster/k8s/system.js';
import { applyInCluster, removeInCluster, systemPods, type PodRow } from '../cluster/k8s/in-cluster.js';
import { webhookClientCaPath } from '../cluster/k8s/pki.js';
import { putBackAfterOpenKruiseManager } from '../cluster/openkruise/manager-process.js';
import { validateClusterDir } from '../cluster/paths.js';
import { runningPid } from '../cluster/runtime/processes.js';
import { AgentProcess } from '../component/daemon/agent-process.js';
import { ControllerProcess, freePort } from '../e2e/controller/controller-process.js';
import { atRunEnd } from './fixtures.js';
import { waitFor } from './wait.js';
import { withEnv } from './with-env.js';
import { errorMessage } from '../../src/util/error-message.js';
import { putKubectlOnPath } from '../cluster/k8s/binaries.js';

export const REAL_NODE_COUNT = 2;

export interface RealCluster {
  dir: string;
  layout: K8sLayout;
  vars: Readonly<Record<string, string>>;
  /** cluster-admin (system:masters) kubeconfig and a client with it. */
  adminKubeconfig: string;
  admin: KubeClient;
  registry: string;
  authRegistry: string;
  authUser: string;
  authPassword: string;
  images: { busybox1: string; busybox2: string; authBusybox1: string };
  nodes: NodeLayout[];
  /** The agent's heap flags from deploy/'s DaemonSet. */
  agentNodeOptions: string;
  /**
   * Kubeconfigs of the kruise-daemon ServiceAccount per node name, each with a token bound to a pod on that node
   * (test/cluster/k8s/system.ts agentTokenPod): an agent may write only its own node's objects (deploy/node-confinement).
   */
  agentKubeconfigs: Readonly<Record<string, string>>;
  /** agentKubeconfigs of the first node. */
  agentKubeconfig: string;
  /** Kubeconfig of the kruise-controller ServiceAccount (bound token). */
  controllerKubeconfig: string;
}

export function realClusterDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.REAL_CLUSTER_DIR ?? join(packageRoot(), '.cluster-real');
  validateClusterDir(dir);
  return dir;
}

/** Progress into <dir>/logs/cluster.log; a first run's Kubernetes build also shows in the terminal (minutes long). */
function fileLog(dir: string): (message: string) => void {
  return (message: string) => {
    if (message.startsWith('k8s-binaries:')) process.stderr.write(`      [real cluster] ${message}\n`);
    try {
      mkdirSync(join(dir, 'logs'), { recursive: true });
      appendFileSync(join(dir, 'logs', 'cluster.log'), `${new Date().toISOString()} [pid ${process.pid}] ${message}\n`);
    } catch {
      // logging must never fail a test
    }
  };
}

let memo: Promise<RealCluster> | undefined;

/** The real cluster, up. Memoised per process: every test file may call it. */
export function useRealCluster(): Promise<RealCluster> {
  memo ??= startOnce().catch((err: unknown) => {
    memo = undefined;
    throw err;
  });
  return memo;
}

function startOnce(): Promise<RealCluster> {
  return startRealClusterIn(realClusterDir());
}

export interface RealClusterOptions {
  nodeCount?: number;
  /** Cluster variables for this up only (e.g. CLUSTER_IMAGE_FS_MIB); CLUSTER_POD_IPAM is kruise-ipam. */
  env?: Readonly<Record<string, string>>;
}

/**
 * A real cluster in `dir`, up, with deploy/'s API objects, as useRealCluster() gives the shared one; a test that
 * needs nodes of its own kind (a small image filesystem) starts one in a directory of its own. Taken down at the end
 * of the run if this process started it (purge it with downCluster when done).
 */
export async function startRealClusterIn(dir: string, options: RealClusterOptions = {}): Promise<RealCluster> {
  validateClusterDir(dir);
  const log = fileLog(dir);
  const wasUp = await isClusterUp({ dir, log }).catch(() => false);
  if (!wasUp) atRunEnd(() => downCluster({ dir, log }));
  let vars: Record<string, string>;
  try {
    vars = await withEnv({ CLUSTER_POD_IPAM: 'kruise-ipam', ...options.env }, () =>
      upCluster({ dir, log, kind: 'real', nodeCount: options.nodeCount ?? REAL_NODE_COUNT }),
    );
  } catch (err) {
    const message = errorMessage(err);
    throw new Error(`real cluster in ${dir} did not come up: ${message} (log: ${join(dir, 'logs', 'cluster.log')})`, {
      cause: err,
    });
  }
  const layout = await layoutFromContext({ dir, env: vars, log });
  if (!layout) throw new Error(`real cluster in ${dir}: no layout after up`);
  // the tests' kubectl is the cluster's version (the machine's dispatcher stops at an older minor)
  putKubectlOnPath(vars);
  // an OpenKruise manager of a run that crashed: its process, its webhooks and its CRDs in place of ours
  await putBackAfterOpenKruiseManager(layout);
  const manifests = renderOverlay(layout);
  installApiObjects(layout, manifests);
  // a controller of an earlier run that died leaves its webhooks registered (and pod creation failing)
  removeWebhookConfigurations(layout);
  const credentials = join(layout.k8sDir, 'credentials');
  const need = (key: string): string => {
    const value = vars[key];
    if (!value) throw new Error(`real cluster env lacks ${key}`);
    return value;
  };
  const agentKubeconfigs: Record<string, string> = {};
  for (const node of layout.nodes) {
    agentKubeconfigs[node.name] = serviceAccountKubeconfig(
      layout,
      SYSTEM_NAMESPACE,
      'kruise-daemon',
      join(credentials, `kruise-daemon-${node.name}.kubeconfig`),
      24,
      agentTokenPod(layout, node, need('SANDBOX_IMAGE')),
    );
  }
  const firstNode = layout.nodes[0];
  if (!firstNode) throw new Error(`real cluster in ${dir}: no nodes`);
  return {
    dir,
    layout,
    vars: Object.freeze({ ...vars }),
    adminKubeconfig: layout.adminKubeconfig,
    admin: new KubeClient(await loadKubeconfig(layout.adminKubeconfig), { timeoutMs: 30_000 }),
    registry: need('REGISTRY'),
    authRegistry: need('AUTH_REGISTRY'),
    authUser: need('AUTH_USER'),
    authPassword: need('AUTH_PASSWORD'),
    images: {
      busybox1: need('TEST_IMAGE_BUSYBOX_1'),
      busybox2: need('TEST_IMAGE_BUSYBOX_2'),
      authBusybox1: need('TEST_IMAGE_AUTH_BUSYBOX_1'),
    },
    nodes: layout.nodes,
    agentNodeOptions: daemonSetNodeOptions(),
    agentKubeconfigs: Object.freeze(agentKubeconfigs),
    agentKubeconfig: agentKubeconfigs[firstNode.name]!,
    controllerKubeconfig: serviceAccountKubeconfig(
      layout,
      SYSTEM_NAMESPACE,
      'kruise-controller',
      join(credentials, 'kruise-controller.kubeconfig'),
    ),
  };
}

/** The kubeconfig of the agent of `node` (its token bound to a pod on that node). */
export function agentKubeconfigOf(cluster: RealCluster, node: NodeLayout): string {
  const file = cluster.agentKubeconfigs[node.name];
  if (!file) throw new Error(`no agent kubeconfig for ${node.name}`);
  return file;
}

/** `nsenter` into a node's mount and network namespaces (through its holder process). */
export async function nodeLauncher(node: NodeLayout): Promise<string[]> {
  const pid = await runningPid(node.holderPidFile, node.dir);
  if (pid === undefined) throw new Error(`${node.name}: its holder process is not running`);
  return ['nsenter', '-t', String(pid), '--mount', '--net', '--'];
}

export interface RealAgent {
  node: NodeLayout;
  process: AgentProcess;
  url: string;
}

export interface SystemOptions {
  /** Nodes that run an agent (default: every node). */
  nodes?: NodeLayout[];
  agentArgs?: string[];
  agentEnv?: Record<string, string> | undefined;
  /**
   * Start the controller (default true) with these extra flags; the agents then ask it for pull credentials
   * (--pull-credentials-url), as deployed. Without it they read copies in kruise-daemon-config themselves, which
   * deploy/'s RBAC does not allow: such a test grants the read (as deploy/overlays/agent-only does).
   */
  controller?: boolean;
  controllerArgs?: string[] | undefined;
}

export interface RealSystem {
  cluster: RealCluster;
  agents: Map<string, RealAgent>;
  controller: ControllerProcess | undefined;
  /** Start (again) the agent of `node`, after a stop or a kill. */
  startAgent(node: NodeLayout): Promise<RealAgent>;
  /** The agent process running on `node` now (throws if none). */
  agentProcess(node: NodeLayout): AgentProcess;
  /** Kill the agent of `node` (SIGKILL by default: no clean stop), wait for its exit, start a new one. */
  restartAgent(node: NodeLayout, signal?: NodeJS.Signals): Promise<AgentProcess>;
  /** Start the controller again, after a stop or a kill: same flags and ports (as a Deployment's new pod behind its Service). */
  startController(): Promise<ControllerProcess>;
  stop(): Promise<void>;
}

export async function startAgentOn(
  cluster: RealCluster,
  node: NodeLayout,
  options: Pick<SystemOptions, 'agentArgs' | 'agentEnv'> = {},
): Promise<RealAgent> {
  const process = new AgentProcess({
    launcher: await nodeLauncher(node),
    host: node.ip,
    args: [
      '--addr',
      `${node.ip}:0`,
      '--runtime-socket',
      node.inNode.runtimeSocket,
      '--ipam',
      '--ipam-data-dir',
      join(node.inNode.cniStateDir, 'kruise-ipam'),
      // the nodes' kubelet thresholds, unless the test names its own
      ...(options.agentArgs?.some((arg) => arg.startsWith('--image-gc-')) ? [] : agentImageGcArgs()),
      ...(options.agentArgs ?? []),
    ],
    env: {
      NODE_NAME: node.name,
      KUBECONFIG: agentKubeconfigOf(cluster, node),
      NODE_OPTIONS: cluster.agentNodeOptions,
      LOG_LEVEL: 'info',
      ...options.agentEnv,
    },
  });
  const url = await process.baseUrl(30_000);
  await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, {
    timeoutMs: 30_000,
    message: `the agent on ${node.name} to be ready`,
  });
  return { node, process, url };
}

/** Our agents and controller on the real cluster, as deployed. Stop it (after hook) before starting another. */
export async function startSystem(cluster: RealCluster, options: SystemOptions = {}): Promise<RealSystem> {
  const agents = new Map<string, RealAgent>();
  let controller: ControllerProcess | undefined;
  const certDir = await mkdtemp(join(cluster.layout.k8sDir, 'controller-certs-'));
  const system: RealSystem = {
    cluster,
    agents,
    controller: undefined,
    async startAgent(node) {
      const credentials = controller ? ['--pull-credentials-url', controller.pullCredentialsUrl] : [];
      const agent = await startAgentOn(cluster, node, {
        ...options,
        agentArgs: [...credentials, ...(options.agentArgs ?? [])],
      });
      agents.set(node.name, agent);
      return agent;
    },
    agentProcess(node) {
      const agent = agents.get(node.name);
      if (!agent) throw new Error(`no agent runs on ${node.name}`);
      return agent.process;
    },
    async restartAgent(node, signal = 'SIGKILL') {
      const agent = system.agentProcess(node);
      agent.child.kill(signal);
      await agent.exited;
      return (await system.startAgent(node)).process;
    },
    async startController() {
      if (!controller) throw new Error('this system was started without a controller');
      if (!controller.hasExited) throw new Error('the controller is still running: stop or kill it first');
      controller = new ControllerProcess(controller.options);
      system.controller = controller;
      await controller.ready(60_000);
      return controller;
    },
    async stop() {
      await Promise.all([...agents.values()].map((a) => a.process.stop()));
      agents.clear();
      if (controller) {
        await controller.stop();
        // its webhooks point at a port nobody serves any more: the next system registers its own
        removeWebhookConfigurations(cluster.layout);
      }
      await rm(certDir, { recursive: true, force: true });
    },
  };
  try {
    if (options.controller ?? true) {
      controller = new ControllerProcess({
        kubeconfig: cluster.controllerKubeconfig,
        host: cluster.layout.hostIp,
        statusPort: await freePort(),
        webhookPort: await freePort(),
        pullCredentialsPort: await freePort(),
        certDir,
        webhookClientCa: webhookClientCaPath(cluster.layout),
        extraArgs: options.controllerArgs,
      });
      system.controller = controller;
      await controller.ready(60_000);
    }
    for (const node of options.nodes ?? cluster.nodes) await system.startAgent(node);
  } catch (err) {
    await system.stop();
    throw err;
  }
  return system;
}

/** Our system installed in the real cluster as users install it (test/cluster/k8s/in-cluster.ts): no host process. */
export interface InClusterSystem {
  cluster: RealCluster;
  image: string;
  /** Seconds from `kubectl apply -k` until every agent and both controller replicas were Ready. */
  rolloutSeconds: number;
  /** The Ready agent pod on `node` that is not being deleted (throws if none). */
  agentPod(node: NodeLayout): PodRow;
  controllerPods(): PodRow[];
  /**
   * Send `signal` to the process of pod `pod` whose command line names `command` (found in /proc: a node shares the
   * host's PID namespace), e.g. SIGSTOP: a replica that hangs, never to renew or release anything. Returns the PID.
   */
  signalPodProcess(pod: string, command: string, signal: NodeJS.Signals): number;
  /**
   * The PID of the main process of container `container` of the system pod `pod`, as its node's runtime answers
   * (CRI ContainerStatus verbose, what `crictl inspect` prints as info.pid; a node shares the host's PID namespace).
   */
  containerPid(pod: PodRow, container: string): Promise<number>;
  /** Run `cmd` in that container (CRI ExecSync: its user, capabilities, seccomp and mounts); a non-zero exit is returned. */
  execIn(
    pod: PodRow,
    container: string,
    cmd: string[],
    timeoutSeconds?: number,
  ): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** A file as seen inside `node`'s mount namespace (e.g. a projected volume, a tmpfs the host does not see). */
  readNodeFile(node: NodeLayout, path: string): Promise<string>;
  /** Remove the workloads, the Service, the PDB and the webhooks; the nodes' kruise-ipam points at this checkout again. */
  stop(): void;
}

/**
 * Install deploy/overlays/ip-retention with the cluster's image (KRUISE_IMAGE) and wait for the rollout. Stop any
 * host-process system first (one system at a time); stop() this one before starting another.
 */
export function startInClusterSystem(cluster: RealCluster): InClusterSystem {
  const image = cluster.vars.KRUISE_IMAGE;
  if (!image) throw new Error('the real cluster env lacks KRUISE_IMAGE (its kruise-image component)');
  const started = Date.now();
  try {
    applyInCluster(cluster.layout, cluster.dir, image);
  } catch (err) {
    removeInCluster(cluster.layout, cluster.dir, true);
    throw err;
  }
  const rolloutSeconds = (Date.now() - started) / 1000;
  return {
    cluster,
    image,
    rolloutSeconds,
    agentPod(node) {
      const pod = systemPods(cluster.layout, 'daemon').find((p) => p.node === node.name && p.ready && !p.deleting);
      if (!pod) throw new Error(`no Ready agent pod on ${node.name}`);
      return pod;
    },
    controllerPods: () => systemPods(cluster.layout, 'controller'),
    signalPodProcess(pod, command, signal) {
      const pid = podProcess(pod, command);
      process.kill(pid, signal);
      return pid;
    },
    containerPid: (pod, container) =>
      onNodeRuntime(cluster, pod, container, async (cri, id, node) => {
        const answer = await cri.containerStatus({ container_id: id, verbose: true });
        const pid = (JSON.parse(answer.info.info ?? '{}') as { pid?: unknown }).pid;
        if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0)
          throw new Error(`${node.name}: the runtime's info on container ${id} names no pid: ${answer.info.info}`);
        return pid;
      }),
    execIn: (pod, container, cmd, timeoutSeconds = 30) =>
      onNodeRuntime(cluster, pod, container, async (cri, id) => {
        const answer = await cri.execSync({ container_id: id, cmd, timeout: timeoutSeconds });
        return { exitCode: answer.exit_code, stdout: answer.stdout.toString(), stderr: answer.stderr.toString() };
      }),
    async readNodeFile(node, path) {
      const [cmd, ...args] = await nodeLauncher(node);
      const read = spawnSync(cmd!, [...args, 'cat', path], { encoding: 'utf8' });
      if (read.status !== 0) throw new Error(`reading ${path} on ${node.name}: ${read.stderr}`);
      return read.stdout;
    },
    stop: () => removeInCluster(cluster.layout, cluster.dir, true),
  };
}

/** `use` the CRI of the node of the system pod `pod` for its container `container` (by the runtime's ID). */
async function onNodeRuntime<T>(
  cluster: RealCluster,
  pod: PodRow,
  container: string,
  use: (cri: CriClient, id: string, node: NodeLayout) => Promise<T>,
): Promise<T> {
  const node = cluster.nodes.find((n) => n.name === pod.node);
  if (!node) throw new Error(`pod ${pod.name} is on ${pod.node || 'no node'}, not a node of this cluster`);
  const id = pod.containerIds[container];
  if (!id) throw new Error(`pod ${pod.name} has no started container ${container}`);
  const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
  try {
    return await use(cri, id, node);
  } finally {
    cri.close();
  }
}

/** The PID of the process of pod `pod` (its environment's POD_NAME or HOSTNAME) running `command`. */
function podProcess(pod: string, command: string): number {
  const found: number[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv.some((a) => a.endsWith(command))) continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`POD_NAME=${pod}`) || env.includes(`HOSTNAME=${pod}`)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  if (found.length !== 1)
    throw new Error(`expected one ${command} process of pod ${pod}, found ${found.join(', ') || 'none'}`);
  return found[0]!;
}
