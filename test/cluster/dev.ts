// `npm run dev [-- --nodes N]`: the whole system on this machine, for people trying it out. Starts the local
// cluster (API emulator, real containerd and registries, kubelet-lite nodes, pods on the kruise-ipam CNI plugin),
// applies deploy/'s CRDs, runs one kruise-daemon per node (the first with IP retention) and the kruise-controller
// (when built; its admission webhooks are registered by URL, so the emulator calls them), waits until all is ready,
// writes $CLUSTER_DIR/dev.env and the kubectl plugin, prints how to use it, shows the logs human-readable, and tears
// everything down on Ctrl-C. Test infrastructure: the agent and controller are the real binaries.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { packageRoot } from '../../src/util/repo-root.js';
import { downCluster, parseNodeCount, upCluster } from './components.js';
import { devGuide, writeDevFiles, type DevSetup } from './dev-guide.js';
import { resolveClusterDir } from './paths.js';
import { errorMessage } from './runtime/errors.js';

const here = dirname(fileURLToPath(import.meta.url));
const AGENT_BIN = join(here, '..', '..', 'src', 'cli', 'kruise-daemon.js');
const CONTROLLER_BIN = join(here, '..', '..', 'src', 'cli', 'kruise-controller.js');
const PLUGIN_BIN = join(here, '..', '..', 'src', 'cli', 'kubectl-kruise-node.js');
const FIRST_AGENT_PORT = 10221;
/** Two nodes, so that "pulled on every node" means something. */
const DEFAULT_DEV_NODES = 2;

interface Managed {
  name: string;
  child: ChildProcess;
}

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
  const levelName = typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : String(level ?? '');
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${clock} ${name} ${levelName.toUpperCase().padEnd(5)} ${String(msg ?? '')}${rest ? `  ${rest}` : ''}`;
}

function start(name: string, args: string[], env: NodeJS.ProcessEnv): Managed {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${humanLine(name, line)}\n`));
  }
  child.on('exit', (code, signal) => process.stdout.write(`${name} exited (${signal ?? code})\n`));
  return { name, child };
}

async function stop(processes: Managed[]): Promise<void> {
  await Promise.all(
    processes.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
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

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { nodes: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(
      'usage: npm run dev [-- --nodes N]   (default 2 nodes; Ctrl-C stops and tears down everything)\n' +
        'CLUSTER_POD_IPAM=host-local keeps the pods on host-local IPAM (default here: kruise-ipam, so pods can keep their IP)\n',
    );
    return 0;
  }
  const nodeCount = parseNodeCount(values.nodes ?? String(DEFAULT_DEV_NODES));
  const dir = resolveClusterDir();
  const log = (message: string): void => void process.stderr.write(`[dev] ${message}\n`);
  const processes: Managed[] = [];
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      log('stopping the agents, the controller and the cluster...');
      await stop(processes);
      await downCluster({ dir, log });
      log('all down');
    })());
  process.once('SIGINT', () => void shutdown().then(() => process.exit(0)));
  process.once('SIGTERM', () => void shutdown().then(() => process.exit(0)));

  try {
    // Pods keep their IP only behind kruise-ipam: make it the local cluster's pod IPAM unless told otherwise.
    process.env.CLUSTER_POD_IPAM ??= 'kruise-ipam';
    const podIpam = process.env.CLUSTER_POD_IPAM;
    const env = await upCluster({ dir, log, nodeCount });
    const kubeconfig = env.KUBECONFIG ?? '';
    const cacheDir = await mkdtemp(join(tmpdir(), 'kd-dev-kubectl-'));
    const kubectlEnv = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cacheDir };
    const applied = kubectl(['apply', '-k', join(packageRoot(), 'deploy', 'crds')], kubectlEnv);
    if (!applied.ok) throw new Error(`kubectl apply -k deploy/crds failed: ${applied.out}`);
    log(applied.out);

    const nodes = (env.NODE_NAMES ?? env.NODE_NAME ?? '').split(',').filter(Boolean);
    const agentUrls = new Map<string, string>();
    for (const [i, node] of nodes.entries()) {
      const port = await portOr(FIRST_AGENT_PORT + i);
      const args = [AGENT_BIN, '--addr', `127.0.0.1:${port}`];
      // All nodes of the local cluster share one containerd and one kruise-ipam store: the first node's agent
      // installs the plugin (in place: it runs on this host) and owns the reservations.
      if (i === 0 && podIpam === 'kruise-ipam') {
        args.push('--ipam-install', '--ipam-install-mode', 'in-place', '--cni-bin-dir', env.CNI_BIN_DIR ?? '');
        args.push('--ipam-data-dir', env.IPAM_DATA_DIR ?? ''); // what `kruise-daemon ipam ls` reads from dev.env
      }
      processes.push(
        start(`agent/${node}`, args, {
          ...process.env,
          NODE_NAME: node,
          KUBECONFIG: kubeconfig,
          RUNTIME_SOCKET: env.RUNTIME_SOCKET,
          LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        }),
      );
      agentUrls.set(node, `http://127.0.0.1:${port}`);
    }
    let controllerUrl: string | undefined;
    if (existsSync(CONTROLLER_BIN)) {
      // its namespaces, and webhooks reached by URL (the emulator has no Service network)
      for (const ns of ['kruise-system', 'kruise-daemon-config']) kubectl(['create', 'namespace', ns], kubectlEnv);
      const statusPort = await portOr(8000);
      const webhookPort = await portOr(9876);
      const controllerArgs = ['--webhook-host', '127.0.0.1', '--webhook-port', String(webhookPort)];
      controllerArgs.push('--webhook-url-base', `https://127.0.0.1:${webhookPort}`);
      controllerArgs.push('--addr', `127.0.0.1:${statusPort}`, '--webhook-cert-dir', join(cacheDir, 'webhook-certs'));
      controllerArgs.push('--nodeimage-creation-delay', '1s');
      processes.push(
        start('controller', [CONTROLLER_BIN, ...controllerArgs], { ...process.env, KUBECONFIG: kubeconfig }),
      );
      controllerUrl = `http://127.0.0.1:${statusPort}`;
    } else {
      log('kruise-controller is not built yet: running the agents only');
    }

    // Ready means: every agent answers /readyz, the controller serves its webhooks (registered with the emulator)
    // and every node has its NodeImage, so the README's commands work from the first one.
    await Promise.all([...agentUrls].map(([node, url]) => waitReady(`${url}/readyz`, `agent ${node}`)));
    if (controllerUrl) {
      await waitReady(`${controllerUrl}/readyz`, 'kruise-controller');
      await waitForNodeImages(nodes, kubectlEnv);
    }
    const setup: DevSetup = {
      clusterDir: dir,
      nodes,
      agentUrls,
      controllerUrl,
      kubectlCacheDir: cacheDir,
      pluginEntry: PLUGIN_BIN,
      nodePath: process.execPath,
      podIpam: podIpam ?? 'host-local',
      examplesDir: join(packageRoot(), 'examples'),
      registry: env.REGISTRY ?? '',
      firstNode: nodes[0] ?? '',
    };
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
