// `npm run dev [-- --nodes N]`: the whole system on this machine, for people trying it out. Starts the real local
// cluster (kube-apiserver, kube-controller-manager, kube-scheduler, etcd and N real kubelets, each node in its own
// network and mount namespace with its own containerd; pods on the kruise-ipam CNI plugin; built from Go modules on
// the first run), applies deploy/'s CRDs, namespaces, ServiceAccounts and RBAC, runs one kruise-daemon inside each
// node as the DaemonSet runs it (its ServiceAccount's token, its heap flags, the node's own CRI socket, IP retention)
// and the kruise-controller on the host (its ServiceAccount's token; its admission webhooks registered with the API
// server by URL), waits until all is ready, writes $CLUSTER_DIR/dev.env and the kubectl plugin, prints how to use
// it, shows the logs human-readable, supervises the agents and the controller as kubelet would (test/cluster/
// supervise.ts: one that exits unasked is said with its cause and started again, with kubelet's back-off), and tears
// everything down on Ctrl-C (exit 0), removing what it wrote, as on any other end (a failure it cannot recover from,
// said with its cause: exit 1).
// Test infrastructure: the agent and controller are the real binaries, run as processes (no image needed).
// `--in-cluster`: nothing of ours runs as a host process: deploy/overlays/ip-retention with the cluster's image
// ($KRUISE_IMAGE) is applied with kubectl (test/cluster/k8s/in-cluster.ts): the agent as the DaemonSet (it copies
// kruise-ipam onto each node: `up` leaves the plugin out, CLUSTER_IPAM_PLUGIN=agent), the controller as the
// Deployment (2 replicas, leader election, PDB, webhooks through its Service).
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { packageRoot } from '../../src/util/repo-root.js';
import { downCluster, parseNodeCount, upCluster } from './components.js';
import { KNOWN_CELLS, parseStack, stackName } from './stack.js';
import { putKubectlOnPath } from './k8s/binaries.js';
import { daemonSetNodeOptions } from './deployed-agent.js';
import { devGuide, prepareDevFiles, removeDevFiles, writeDevFiles, type DevSetup } from './dev-guide.js';
import { layoutFromContext } from './k8s/context.js';
import { applyInCluster, removeInCluster } from './k8s/in-cluster.js';
import {
  agentLaunch,
  agentTokenPod,
  agentUrl,
  controllerLaunch,
  pullCredentialsUrl,
  installApiObjects,
  removeWebhookConfigurations,
  renderOverlay,
  serviceAccountKubeconfig,
  SYSTEM_NAMESPACE,
  type Launch,
} from './k8s/system.js';
import { resolveClusterDir } from './paths.js';
import { errorMessage } from './runtime/errors.js';
import { runningPid } from './runtime/processes.js';
import { Supervised } from './supervise.js';

const here = dirname(fileURLToPath(import.meta.url));
const PLUGIN_BIN = join(here, '..', '..', 'src', 'cli', 'kubectl-kruise-node.js');
/** Two nodes, so that "pulled on every node" means something. */
const DEFAULT_DEV_NODES = 2;

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as `name LEVEL msg key=value ...`; anything else as it is. */
export function humanLine(name: string, line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `${name} ${line}`;
  }
  const { level, msg, time, pid: _pid, hostname: _h, name: _n, ...fields } = record;
  // a string as it is, anything else as JSON, nothing as nothing
  const text = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  const levelName = typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : text(level ?? '');
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${text(v)}`)
    .join(' ');
  return `${clock} ${name} ${levelName.toUpperCase().padEnd(5)} ${text(msg ?? '')}${rest ? `  ${rest}` : ''}`;
}

/** The port if it is free on 127.0.0.1, else any free port (another `npm run dev`, a test, a service). */
async function portOr(preferred: number): Promise<number> {
  const tryListen = (port: number): Promise<number | undefined> =>
    new Promise((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        const bound = typeof address === 'object' && address ? address.port : undefined;
        server.close(() => resolve(bound));
      });
    });
  return (await tryListen(preferred)) ?? (await tryListen(0)) ?? preferred;
}

async function waitReady(url: string, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
      last = `${res.status} ${(await res.text()).slice(0, 200)}`;
    } catch (err) {
      last = errorMessage(err);
    }
    await delay(250);
  }
  throw new Error(`${what} not ready at ${url} within ${timeoutMs / 1000}s: ${last}`);
}

function kubectl(args: string[], env: NodeJS.ProcessEnv): { ok: boolean; out: string } {
  const result = spawnSync('kubectl', args, { env, encoding: 'utf8' });
  return { ok: result.status === 0, out: `${result.stdout}${result.stderr}`.trim() };
}

async function waitForNodeImages(nodes: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = kubectl(['get', 'nodeimages', '-o', 'jsonpath={.items[*].metadata.name}'], env);
    const have = new Set(listed.ok ? listed.out.split(/\s+/) : []);
    if (nodes.every((n) => have.has(n))) return;
    if (Date.now() > deadline) throw new Error(`NodeImages of ${nodes.join(', ')} not created: ${listed.out}`);
    await delay(250);
  }
}

/** What dev writes for either mode, but where the agents and the controller are. */
function devSetupParts(
  dir: string,
  nodes: string[],
  podIpam: string | undefined,
  env: NodeJS.ProcessEnv,
): Omit<DevSetup, 'agentUrls' | 'controllerUrl' | 'inCluster'> {
  return {
    clusterDir: dir,
    nodes,
    owner: { pid: process.pid, script: basename(fileURLToPath(import.meta.url)) },
    pluginEntry: PLUGIN_BIN,
    nodePath: process.execPath,
    podIpam: podIpam ?? 'host-local',
    examplesDir: join(packageRoot(), 'examples'),
    registry: env.REGISTRY ?? '',
    firstNode: nodes[0] ?? '',
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string' },
      'in-cluster': { type: 'boolean' },
      kubernetes: { type: 'string' },
      runtime: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run dev [-- --nodes N] [--in-cluster] [--kubernetes 1.37] [--runtime containerd-2.4]\n' +
        '(default 2 nodes on Kubernetes 1.37 with containerd 2.4; Ctrl-C stops and tears down everything)\n' +
        `--kubernetes, --runtime: the stack; known cells: ${KNOWN_CELLS.map((c) => `${c.kubernetes}/${c.runtime}`).join(', ')}\n` +
        '--in-cluster: install deploy/overlays/ip-retention with the image built here (DaemonSet, Deployment), no host process\n' +
        'The first run builds Kubernetes from Go modules (5 to 10 minutes on 2 cores; cached afterwards).\n' +
        'CLUSTER_POD_IPAM=host-local keeps the pods on host-local IPAM (default here: kruise-ipam, so pods can keep their IP)\n',
    );
    return 0;
  }
  const nodeCount = parseNodeCount(values.nodes ?? String(DEFAULT_DEV_NODES));
  const stack = parseStack(
    values.kubernetes ?? process.env.CLUSTER_KUBERNETES,
    values.runtime ?? process.env.CLUSTER_RUNTIME,
  );
  const dir = resolveClusterDir();
  const inCluster = values['in-cluster'] === true;
  const log = (message: string): void => void process.stderr.write(`[dev] ${message}\n`);
  const processes: Supervised[] = [];
  let installed: (() => void) | undefined;
  let stopping: Promise<boolean> | undefined;
  /** Stop everything and remove what dev wrote; false when some of it failed (said in the log). */
  const shutdown = (): Promise<boolean> =>
    (stopping ??= (async () => {
      log('stopping the agents, the controller and the cluster...');
      await Promise.all(processes.map((p) => p.stop()));
      try {
        installed?.();
      } catch (err) {
        log(`removing the in-cluster install failed: ${errorMessage(err)}`);
      }
      removeDevFiles(dir);
      try {
        await downCluster({ dir, log });
      } catch (err) {
        log(`tearing the cluster down failed: ${errorMessage(err)}`);
        return false;
      }
      log('all down');
      return true;
    })());
  // Ctrl-C, kill, or the terminal closing; a repeated signal while stopping does not cut the teardown short.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void shutdown().then((clean) => process.exit(clean ? 0 : 1)));
  }
  /** A failure dev cannot recover from: said with its cause, then everything torn down as on Ctrl-C (exit 1). */
  const fail = (reason: string): void => {
    log(`failed: ${reason}`);
    void shutdown().then(() => process.exit(1));
  };
  process.on('uncaughtException', (err) => fail(`unexpected error: ${errorMessage(err)}`));
  process.on('unhandledRejection', (err) => fail(`unexpected error: ${errorMessage(err)}`));
  // dev runs until a signal whatever its children do (a promise alone does not keep Node running)
  setInterval(() => undefined, 1 << 30);
  const supervise = (name: string, launch: Launch, canRestart?: () => Promise<string | undefined>): void => {
    if (stopping) return;
    processes.push(
      new Supervised({
        name,
        launch,
        line: (from, line) => void process.stdout.write(`${humanLine(from, line)}\n`),
        say: (message) => void process.stdout.write(`${message}\n`),
        canRestart,
        onFatal: fail,
      }),
    );
  };

  try {
    // Pods keep their IP only behind kruise-ipam: make it the local cluster's pod IPAM unless told otherwise.
    process.env.CLUSTER_POD_IPAM ??= 'kruise-ipam';
    const podIpam = process.env.CLUSTER_POD_IPAM;
    if (inCluster && podIpam === 'kruise-ipam') process.env.CLUSTER_IPAM_PLUGIN = 'agent';
    const paths = prepareDevFiles(dir);
    const upStarted = Date.now();
    log(`starting ${stackName(stack)} (the first run of a stack builds it from Go modules: 5 to 15 minutes)`);
    const env = await upCluster({ dir, log, nodeCount, kind: 'real', stack });
    const layout = await layoutFromContext({ dir, env, log });
    if (!layout) throw new Error('the cluster came up without its layout');
    putKubectlOnPath(env);
    if (inCluster) {
      const image = env.KRUISE_IMAGE;
      if (!image) throw new Error('the cluster env lacks KRUISE_IMAGE');
      const upSeconds = (Date.now() - upStarted) / 1000;
      const applied = Date.now();
      installed = () => removeInCluster(layout, dir, false);
      applyInCluster(layout, dir, image);
      const nodes = layout.nodes.map((n) => n.name);
      await waitForNodeImages(nodes, {
        ...process.env,
        KUBECONFIG: layout.adminKubeconfig,
        KUBECACHEDIR: paths.kubectlCacheDir,
      });
      log(
        `in-cluster: cluster up in ${upSeconds.toFixed(1)} s; applied ${image}, all pods Ready and NodeImages made ` +
          `${((Date.now() - applied) / 1000).toFixed(1)} s later (${((Date.now() - upStarted) / 1000).toFixed(1)} s from up)`,
      );
      const setup: DevSetup = {
        ...devSetupParts(dir, nodes, podIpam, env),
        agentUrls: new Map(layout.nodes.map((n) => [n.name, agentUrl(n)])),
        controllerUrl: undefined,
        inCluster: true,
      };
      const envFile = writeDevFiles(setup);
      process.stdout.write(devGuide(setup, envFile));
      log(`ready: source ${envFile}`);
      await new Promise<never>(() => {
        /* runs until a signal */
      });
    }

    // deploy/'s API objects, then our processes with the ServiceAccounts' own tokens (RBAC as deployed)
    installApiObjects(layout, renderOverlay(layout));
    removeWebhookConfigurations(layout);
    log("applied deploy/'s CRDs, namespaces, ServiceAccounts and RBAC");
    const controllerKubeconfig = serviceAccountKubeconfig(
      layout,
      SYSTEM_NAMESPACE,
      'kruise-controller',
      join(paths.stateDir, 'kruise-controller.kubeconfig'),
    );

    const sandboxImage = env.SANDBOX_IMAGE;
    if (!sandboxImage) throw new Error('the cluster env lacks SANDBOX_IMAGE');
    const agentUrls = new Map<string, string>();
    // the agents ask the controller (on the host) for pull credentials at the host's node-network address
    const credentialsPort = await portOr(9443);
    for (const node of layout.nodes) {
      const holderPid = await runningPid(node.holderPidFile, node.dir);
      if (holderPid === undefined) throw new Error(`${node.name}: its holder process is not running`);
      // a token bound to a pod on the node: deploy/node-confinement lets an agent write its own node's objects only
      const agentKubeconfig = serviceAccountKubeconfig(
        layout,
        SYSTEM_NAMESPACE,
        'kruise-daemon',
        join(paths.stateDir, `kruise-daemon-${node.name}.kubeconfig`),
        24,
        agentTokenPod(layout, node, sandboxImage),
      );
      const launch = agentLaunch(node, {
        holderPid,
        kubeconfig: agentKubeconfig,
        nodeOptions: daemonSetNodeOptions(),
        ipam: podIpam === 'kruise-ipam',
        extraArgs: ['--pull-credentials-url', pullCredentialsUrl(layout, credentialsPort)],
      });
      // the agent runs in the node's namespaces, held by its holder process: gone, the node cannot get its agent back
      supervise(`agent/${node.name}`, launch, async () =>
        (await runningPid(node.holderPidFile, node.dir)) === holderPid
          ? undefined
          : `the holder process of ${node.name}'s namespaces (PID ${holderPid}) is gone`,
      );
      agentUrls.set(node.name, agentUrl(node));
    }
    const statusPort = await portOr(8000);
    const webhookPort = await portOr(9876);
    const controller = controllerLaunch(layout, {
      kubeconfig: controllerKubeconfig,
      statusPort,
      webhookPort,
      pullCredentialsPort: credentialsPort,
      certDir: paths.webhookCertDir,
      extraArgs: ['--nodeimage-creation-delay', '1s'],
    });
    supervise('controller', controller);
    const controllerUrl = `http://${layout.hostIp}:${statusPort}`;

    // Ready means: every agent answers /readyz, the controller serves its webhooks (registered with the API server)
    // and every node has its NodeImage, so the README's commands work from the first one.
    const nodes = layout.nodes.map((n) => n.name);
    const kubectlEnv = { ...process.env, KUBECONFIG: layout.adminKubeconfig, KUBECACHEDIR: paths.kubectlCacheDir };
    await Promise.all([...agentUrls].map(([node, url]) => waitReady(`${url}/readyz`, `agent ${node}`)));
    await waitReady(`${controllerUrl}/readyz`, 'kruise-controller');
    await waitForNodeImages(nodes, kubectlEnv);
    const setup: DevSetup = { ...devSetupParts(dir, nodes, podIpam, env), agentUrls, controllerUrl };
    const envFile = writeDevFiles(setup);
    process.stdout.write(devGuide(setup, envFile));
    log(`ready: source ${envFile}`);
    await new Promise<never>(() => {
      /* runs until a signal */
    });
    return 0;
  } catch (err) {
    log(`failed: ${errorMessage(err)}`);
    await shutdown();
    return 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`[dev] ${errorMessage(err)}\n`);
      process.exit(1);
    },
  );
}
