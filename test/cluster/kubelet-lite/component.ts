// kubelet-lite as a component of the local cluster (test infrastructure): after the API emulator, one detached
// process running every node (NODE_COUNT: NODE_NAME, then kd-node-2 ... kd-node-N). `down` stops the process
// (SIGTERM: pods keep running, as when kubelet stops) and then stops and removes every sandbox kubelet-lite made on
// this containerd. Variables: NODE_NAMES, KUBELET_LITE_PID_FILE, KUBELET_LITE_LOG, KUBELET_LITE_CONFIG.
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriClient } from '../../../src/cri/index.js';
import type { ClusterComponent, ClusterContext } from '../component.js';
import type { ComponentStatus } from '../runtime/component-status.js';
import { ensureDaemon } from '../runtime/daemon.js';
import { tailOfFile } from '../runtime/files.js';
import { isAlive, runningPid, stopDaemon } from '../runtime/processes.js';
import { waitUntil } from '../runtime/wait-until.js';
import { clusterPaths } from '../paths.js';
import { removeCgroupTree } from '../runtime/cgroups.js';
import { NODE_LABEL, POD_UID_LABEL } from './labels.js';
import type { KubeletLiteConfig } from './process-config.js';

export const DEFAULT_FIRST_NODE = 'kd-node-1';

export interface KubeletLitePaths {
  dir: string;
  config: string;
  pidFile: string;
  logFile: string;
  readyFile: string;
  stateDir: string;
}

export function kubeletLitePaths(clusterDir: string): KubeletLitePaths {
  const dir = join(clusterDir, 'kubelet-lite');
  return {
    dir,
    config: join(dir, 'config.json'),
    pidFile: join(clusterDir, 'run', 'kubelet-lite.pid'),
    logFile: join(clusterDir, 'logs', 'kubelet-lite.log'),
    readyFile: join(clusterDir, 'run', 'kubelet-lite.ready'),
    stateDir: join(dir, 'state'),
  };
}

/** The compiled entry point (any outDir). */
export const KUBELET_LITE_MAIN = fileURLToPath(new URL('./main.js', import.meta.url));

/** Node names for `count` nodes: the first is `first` (the emulator's NODE_NAME), then kd-node-2 ... */
export function nodeNames(count: number, first = DEFAULT_FIRST_NODE): string[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? first : `kd-node-${i + 1}`));
}

export interface KubeletLiteComponentOptions {
  /** Multiplies kubelet's timers (default KUBELET_LITE_TIME_SCALE, else 1). */
  timeScale?: number;
  startTimeoutSeconds?: number;
}

async function readyPid(readyFile: string): Promise<number | undefined> {
  try {
    const parsed = JSON.parse(await readFile(readyFile, 'utf8')) as { pid?: unknown };
    return typeof parsed.pid === 'number' ? parsed.pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stop and remove every sandbox (and its containers) that a kubelet-lite made on this runtime (of one node, if
 * given); with `podCgroupParent`, also the pods' cgroups (`<parent>/pod<uid>`).
 */
export async function removeKubeletLiteSandboxes(
  runtimeSocket: string,
  node?: string,
  podCgroupParent?: string,
): Promise<number> {
  if (!existsSync(runtimeSocket.replace(/^unix:\/\//, ''))) return 0; // no runtime: nothing runs
  const cri = new CriClient({ socket: runtimeSocket, timeoutMs: 30_000, reconnectWaitMs: 1_000 });
  try {
    const selector = node ? { [NODE_LABEL]: node } : undefined;
    const all = await cri.listPodSandbox(selector ? { filter: { label_selector: selector } } : {});
    const ours = all.items.filter((s) => s.labels?.[NODE_LABEL] !== undefined);
    for (const s of ours) {
      const containers = await cri.listContainers({ filter: { pod_sandbox_id: s.id } });
      for (const c of containers.containers) {
        await cri.stopContainer({ container_id: c.id, timeout: 0 }).catch(() => undefined);
        await cri.removeContainer({ container_id: c.id }).catch(() => undefined);
      }
      await cri.stopPodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
      await cri.removePodSandbox({ pod_sandbox_id: s.id }).catch(() => undefined);
      const uid = s.labels?.[POD_UID_LABEL];
      if (podCgroupParent && uid) await removeCgroupTree(`${podCgroupParent}/pod${uid}`).catch(() => undefined);
    }
    return ours.length;
  } finally {
    cri.close();
  }
}

export function kubeletLiteComponent(options: KubeletLiteComponentOptions = {}): ClusterComponent & {
  status(ctx: ClusterContext): Promise<ComponentStatus[]>;
} {
  return {
    name: 'kubelet-lite',
    async up(ctx: ClusterContext): Promise<Record<string, string>> {
      const kubeconfig = ctx.env.KUBECONFIG;
      const runtimeSocket = ctx.env.RUNTIME_SOCKET;
      if (!kubeconfig || !runtimeSocket) {
        throw new Error(
          'kubelet-lite needs the API emulator (KUBECONFIG) and containerd (RUNTIME_SOCKET) started before it',
        );
      }
      const paths = kubeletLitePaths(ctx.dir);
      const cluster = clusterPaths(ctx.dir);
      const count = Number(ctx.env.NODE_COUNT ?? '1');
      const nodes = nodeNames(
        Number.isSafeInteger(count) && count > 0 ? count : 1,
        ctx.env.NODE_NAME ?? DEFAULT_FIRST_NODE,
      );
      const timeScale = options.timeScale ?? Number(process.env.KUBELET_LITE_TIME_SCALE ?? '1');
      const config: KubeletLiteConfig = {
        nodes,
        kubeconfig,
        runtimeSocket,
        podCgroupParent: ctx.env.POD_CGROUP_PARENT ?? cluster.podCgroupParent,
        podLogDir: ctx.env.POD_LOG_DIR ?? join(ctx.dir, 'pod-logs'),
        stateDir: paths.stateDir,
        readyFile: paths.readyFile,
        hostIP: '127.0.0.1',
        timeScale,
      };
      const state = await ensureDaemon(
        {
          name: 'kubelet-lite',
          command: process.execPath,
          args: [KUBELET_LITE_MAIN, '--config', paths.config],
          configFile: paths.config,
          configText: `${JSON.stringify(config, null, 2)}\n`,
          pidFile: paths.pidFile,
          logFile: paths.logFile,
        },
        ctx.log,
      );
      await waitUntil(async () => (await readyPid(paths.readyFile)) === state.pid, {
        timeoutMs: (options.startTimeoutSeconds ?? 30) * 1000,
        what: `kubelet-lite (PID ${state.pid}) to register its nodes`,
        failFast: async () =>
          isAlive(state.pid) ? undefined : `it exited; log ${paths.logFile}:\n${await tailOfFile(paths.logFile, 10)}`,
      });
      return {
        NODE_NAMES: nodes.join(','),
        KUBELET_LITE_PID_FILE: paths.pidFile,
        KUBELET_LITE_LOG: paths.logFile,
        KUBELET_LITE_CONFIG: paths.config,
      };
    },
    async down(ctx: ClusterContext): Promise<void> {
      const paths = kubeletLitePaths(ctx.dir);
      const pid = await stopDaemon(paths.pidFile, paths.config);
      if (pid !== undefined) ctx.log(`kubelet-lite: stopped (PID ${pid})`);
      await rm(paths.readyFile, { force: true });
      const socket = ctx.env.RUNTIME_SOCKET ?? clusterPaths(ctx.dir).containerd.socket;
      const removed = await removeKubeletLiteSandboxes(socket).catch(() => 0);
      if (removed > 0) ctx.log(`kubelet-lite: removed ${removed} pod sandbox(es)`);
      await rm(join(paths.stateDir, 'pods'), { recursive: true, force: true });
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const paths = kubeletLitePaths(ctx.dir);
      const pid = await runningPid(paths.pidFile, paths.config);
      const ready = pid !== undefined && (await readyPid(paths.readyFile)) === pid;
      return [
        {
          name: 'kubelet-lite',
          healthy: ready,
          detail: pid ? `PID ${pid}, nodes ${ctx.env.NODE_NAMES ?? '?'}` : 'not running',
        },
      ];
    },
  };
}
