// The API emulator as a component of the local cluster: a detached process (PID file under CLUSTER_DIR/run,
// log under CLUSTER_DIR/logs), state in CLUSTER_DIR/apiserver/state.json, kubeconfig in CLUSTER_DIR/kubeconfig,
// and the Node object NODE_NAME registered. Variables: KUBECONFIG, NODE_NAME, API_SERVER_URL.
//
// Data: `down` stops the process, which saves its state. `up` starts from an empty cluster unless asked to keep
// the data (option keepData, or CLUSTER_KEEP_DATA=1): then the saved state is loaded.
import { arch, release } from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterComponent, ClusterContext } from '../component.js';
import { ensureDaemon } from '../runtime/daemon.js';
import { readTextIfExists, tailOfFile } from '../runtime/files.js';
import { freeLoopbackPort, loopbackPortIsFree } from '../runtime/allocations.js';
import { isAlive, runningPid, stopDaemon } from '../runtime/processes.js';
import { waitUntil } from '../runtime/wait-until.js';
import { writeKubeconfig } from './kubeconfig.js';
import { parseProcessConfig, type ProcessConfig } from './process-config.js';

export const DEFAULT_NODE_NAME = 'kd-node-1';
const HOST = '127.0.0.1';

export interface ApiServerComponentOptions {
  /** Load the state saved by the previous run (default: CLUSTER_KEEP_DATA=1). */
  keepData?: boolean;
  /** Seconds to wait for the process to answer /readyz (default 20). */
  startTimeoutSeconds?: number;
}

export interface ApiServerPaths {
  dir: string;
  config: string;
  dataFile: string;
  pidFile: string;
  logFile: string;
  kubeconfig: string;
}

export function apiServerPaths(clusterDir: string): ApiServerPaths {
  const dir = join(clusterDir, 'apiserver');
  return {
    dir,
    config: join(dir, 'config.json'),
    dataFile: join(dir, 'state.json'),
    pidFile: join(clusterDir, 'run', 'apiserver.pid'),
    logFile: join(clusterDir, 'logs', 'apiserver.log'),
    kubeconfig: join(clusterDir, 'kubeconfig'),
  };
}

const mainScript = fileURLToPath(new URL('./main.js', import.meta.url));

/** The Node object kubelet-lite's node is represented by (Ready, linux/amd64 labels). */
export function nodeManifest(name: string, now = new Date()): Record<string, unknown> {
  const at = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const cpuArch = arch() === 'x64' ? 'amd64' : arch() === 'arm64' ? 'arm64' : arch();
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
      },
    },
    spec: {},
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'registered by the local cluster (kubelet-lite node)',
          lastHeartbeatTime: at,
          lastTransitionTime: at,
        },
      ],
      addresses: [
        { type: 'InternalIP', address: HOST },
        { type: 'Hostname', address: name },
      ],
      capacity: { cpu: '2', memory: '4Gi', pods: '110' },
      allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
      nodeInfo: {
        architecture: cpuArch,
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        kernelVersion: release(),
        kubeletVersion: 'v1.32.0',
        kubeProxyVersion: 'v1.32.0',
        containerRuntimeVersion: 'containerd://1.6',
        machineID: '',
        systemUUID: '',
        bootID: '',
      },
    },
  };
}

async function choosePort(paths: ApiServerPaths): Promise<number> {
  const previous = await readTextIfExists(paths.config);
  if (previous !== undefined) {
    try {
      const { port } = parseProcessConfig(previous);
      if (
        port > 0 &&
        ((await runningPid(paths.pidFile, paths.config)) !== undefined || (await loopbackPortIsFree(port)))
      ) {
        return port;
      }
    } catch {
      // a damaged config: choose again
    }
  }
  return freeLoopbackPort();
}

async function registerNode(url: string, name: string): Promise<void> {
  const response = await fetch(`${url}/api/v1/nodes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'kruise-daemon-cluster/apiserver-component' },
    body: JSON.stringify(nodeManifest(name)),
    signal: AbortSignal.timeout(5_000),
  });
  if (response.status !== 201 && response.status !== 409) {
    throw new Error(`registering Node ${name} failed: HTTP ${response.status} ${await response.text()}`);
  }
  await response.body?.cancel().catch(() => undefined);
}

async function ready(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel().catch(() => undefined);
    return response.status === 200;
  } catch {
    return false;
  }
}

export function apiServerComponent(options: ApiServerComponentOptions = {}): ClusterComponent {
  return {
    name: 'apiserver',
    async up(ctx: ClusterContext): Promise<Record<string, string>> {
      const paths = apiServerPaths(ctx.dir);
      const keepData = options.keepData ?? process.env.CLUSTER_KEEP_DATA === '1';
      const nodeName = ctx.env.NODE_NAME ?? process.env.NODE_NAME ?? DEFAULT_NODE_NAME;
      const running = await runningPid(paths.pidFile, paths.config);
      if (running === undefined && !keepData) await rm(paths.dataFile, { force: true });
      const port = await choosePort(paths);
      const config: ProcessConfig = { host: HOST, port, dataFile: paths.dataFile };
      const state = await ensureDaemon(
        {
          name: 'apiserver',
          command: process.execPath,
          args: [mainScript, '--config', paths.config],
          configFile: paths.config,
          configText: `${JSON.stringify(config, null, 2)}\n`,
          pidFile: paths.pidFile,
          logFile: paths.logFile,
        },
        ctx.log,
      );
      const url = `http://${HOST}:${port}`;
      await waitUntil(() => ready(url), {
        timeoutMs: (options.startTimeoutSeconds ?? 20) * 1000,
        what: `the API emulator at ${url}`,
        failFast: async () =>
          isAlive(state.pid) ? undefined : `it exited; log ${paths.logFile}:\n${await tailOfFile(paths.logFile, 10)}`,
      });
      await writeKubeconfig(paths.kubeconfig, url);
      await registerNode(url, nodeName);
      return { KUBECONFIG: paths.kubeconfig, NODE_NAME: nodeName, API_SERVER_URL: url };
    },
    async down(ctx: ClusterContext): Promise<void> {
      const paths = apiServerPaths(ctx.dir);
      const pid = await stopDaemon(paths.pidFile, paths.config);
      if (pid !== undefined) ctx.log(`apiserver: stopped (PID ${pid})`);
    },
  };
}
