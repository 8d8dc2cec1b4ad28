// `npm run dev [-- --nodes N]`: the whole system on this machine, for people trying it out. Starts the local
// cluster (API emulator, real containerd and registries, kubelet-lite nodes), applies deploy/'s CRDs, runs one
// kruise-daemon per node and the kruise-controller (when built), shows their logs human-readable, and tears
// everything down on Ctrl-C. Test infrastructure: the agent and controller are the real binaries.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { packageRoot } from '../../src/util/repo-root.js';
import { downCluster, parseNodeCount, upCluster } from './components.js';
import { resolveClusterDir } from './paths.js';
import { errorMessage } from './runtime/errors.js';

const here = dirname(fileURLToPath(import.meta.url));
const AGENT_BIN = join(here, '..', '..', 'src', 'cli', 'kruise-daemon.js');
const CONTROLLER_BIN = join(here, '..', '..', 'src', 'cli', 'kruise-controller.js');
const FIRST_AGENT_PORT = 10221;

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

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { nodes: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write('usage: npm run dev [-- --nodes N]   (Ctrl-C stops and tears down everything)\n');
    return 0;
  }
  const nodeCount = values.nodes === undefined ? undefined : parseNodeCount(values.nodes);
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
    const env = await upCluster({ dir, log, nodeCount });
    const kubeconfig = env.KUBECONFIG ?? '';
    const cacheDir = await mkdtemp(join(tmpdir(), 'kd-dev-kubectl-'));
    const kubectlEnv = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cacheDir };
    const applied = spawnSync('kubectl', ['apply', '-k', join(packageRoot(), 'deploy', 'crds')], {
      env: kubectlEnv,
      encoding: 'utf8',
    });
    if (applied.status !== 0) throw new Error(`kubectl apply -k deploy/crds failed: ${applied.stderr}`);
    log(applied.stdout.trim());

    const nodes = (env.NODE_NAMES ?? env.NODE_NAME ?? '').split(',').filter(Boolean);
    nodes.forEach((node, i) => {
      processes.push(
        start(`agent/${node}`, [AGENT_BIN, '--addr', `127.0.0.1:${FIRST_AGENT_PORT + i}`], {
          ...process.env,
          NODE_NAME: node,
          KUBECONFIG: kubeconfig,
          RUNTIME_SOCKET: env.RUNTIME_SOCKET,
        }),
      );
    });
    if (existsSync(CONTROLLER_BIN)) {
      // its namespaces, and webhooks reached by URL (the emulator has no Service network)
      for (const ns of ['kruise-system', 'kruise-daemon-config']) {
        spawnSync('kubectl', ['create', 'namespace', ns], { env: kubectlEnv, encoding: 'utf8' });
      }
      const controllerArgs = ['--webhook-host', '127.0.0.1', '--webhook-url-base', 'https://127.0.0.1:9876'];
      controllerArgs.push('--addr', '127.0.0.1:8000', '--webhook-cert-dir', join(cacheDir, 'webhook-certs'));
      processes.push(
        start('controller', [CONTROLLER_BIN, ...controllerArgs], { ...process.env, KUBECONFIG: kubeconfig }),
      );
    } else {
      log('kruise-controller is not built yet: running the agents only');
    }

    process.stdout.write(
      [
        '',
        `The local cluster is up (${nodes.length} node${nodes.length === 1 ? '' : 's'}: ${nodes.join(', ')}).`,
        'In another shell:',
        `  export KUBECONFIG=${kubeconfig} KUBECACHEDIR=${cacheDir}`,
        '  kubectl get nodes',
        '  kubectl get nodeimages',
        `  # every variable of the cluster (registries, runtime socket): source ${join(dir, 'env')}`,
        `Agents' health and metrics: http://127.0.0.1:${FIRST_AGENT_PORT}/metrics (one port per node from there).`,
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
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
