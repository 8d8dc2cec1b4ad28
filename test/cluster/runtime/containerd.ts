// Component "containerd": a private containerd (CRI plugin) for the cluster, started detached with a PID file,
// restarted when its generated config changes, ready once CRI Version answers. down kills and deletes every task,
// stops containerd and any shim still serving our socket, kills what is left in the pod cgroups, unmounts
// everything under CLUSTER_DIR and removes the sockets.
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterContext } from '../component.js';
import { binaryPathsOf, containerdRuntime } from '../k8s/binaries.js';
import { clusterPaths, type ClusterPaths } from '../paths.js';
import { removeCgroupTree } from './cgroups.js';
import type { ComponentStatus, ComponentWithStatus } from './component-status.js';
import { containerdConfig, registryHostsToml } from './containerd-config.js';
import { criVersion, type CriVersion } from './cri-probe.js';
import { ensureDaemon } from './daemon.js';
import { ClusterError, errorMessage } from './errors.js';
import { run } from './exec.js';
import { readTextIfExists, tailOfFile, writeIfChanged } from './files.js';
import { unmountAllUnder } from './mounts.js';
import { findProcesses, isAlive, runningPid, signal, startDaemon, stopDaemon, stopProcess } from './processes.js';
import { waitUntil } from './wait-until.js';

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
/** containerd 1.6 puts shim sockets here whatever its config says. */
const SHIM_SOCKET_DIR = '/run/containerd/s';

function requireEnv(ctx: ClusterContext, key: string, from: string): string {
  const value = ctx.env[key];
  if (!value) throw new ClusterError(`containerd needs ${key} from the ${from} component (start it first)`);
  return value;
}

function daemonArgs(paths: ClusterPaths): string[] {
  return ['--config', paths.containerd.config];
}

/** How the cluster's containerd is started: its stack's binary, with its directory first on PATH (the runc shim). */
function daemonCommand(paths: ClusterPaths): { command: string; env: Record<string, string> } {
  const runtime = binaryPathsOf(paths.dir).runtime;
  return {
    command: runtime.containerd,
    env: { PATH: `${runtime.containerdDir}:${process.env.PATH ?? '/usr/bin:/bin'}` },
  };
}

/** Wait until containerd (PID `pid`) serves CRI on its socket; fail at once if it exits. */
export async function waitForCri(paths: ClusterPaths, pid: number): Promise<CriVersion> {
  let version: CriVersion | undefined;
  await waitUntil(
    async () => {
      version = await criVersion(paths.containerd.socket, 1_000);
      return true;
    },
    {
      timeoutMs: READY_TIMEOUT_MS,
      what: `containerd's CRI plugin on ${paths.containerd.socket}`,
      intervalMs: 50,
      failFast: async () =>
        isAlive(pid)
          ? undefined
          : `containerd (PID ${pid}) exited; last lines of ${paths.containerd.log}:\n${await tailOfFile(paths.containerd.log)}`,
    },
  );
  return version!;
}

async function writeRegistryHosts(paths: ClusterPaths, registries: string[]): Promise<void> {
  const certsDir = paths.containerd.certsDir;
  await mkdir(certsDir, { recursive: true });
  for (const entry of await readdir(certsDir)) {
    if (!registries.includes(entry)) await rm(join(certsDir, entry), { recursive: true, force: true });
  }
  for (const registry of registries) {
    await writeIfChanged(join(certsDir, registry, 'hosts.toml'), registryHostsToml(registry));
  }
}

/** Stop the running containerd and start it again with the same config; resolves when CRI answers. */
export async function restartContainerd(dir: string): Promise<{ oldPid: number | undefined; pid: number }> {
  const paths = clusterPaths(dir);
  const c = paths.containerd;
  if ((await readTextIfExists(c.config)) === undefined) {
    throw new ClusterError(`no containerd config at ${c.config}: bring the cluster up first`);
  }
  const oldPid = await runningPid(c.pidFile, c.config);
  if (oldPid !== undefined) await stopProcess(oldPid, c.config, STOP_GRACE_MS);
  const pid = await startDaemon({
    ...daemonCommand(paths),
    args: daemonArgs(paths),
    logFile: c.log,
    pidFile: c.pidFile,
  });
  await waitForCri(paths, pid);
  return { oldPid, pid };
}

async function ctr(paths: ClusterPaths, args: string[]): Promise<string[]> {
  const result = await run(binaryPathsOf(paths.dir).runtime.ctr, ['--address', paths.containerd.socket, ...args], {
    timeoutMs: 15_000,
  });
  if (result.code !== 0) return [];
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Kill and delete every task in every namespace; returns the container ids seen (for cgroup clean-up). */
async function removeAllTasks(paths: ClusterPaths, log: (message: string) => void): Promise<string[]> {
  const containerIds: string[] = [];
  for (const namespace of await ctr(paths, ['namespaces', 'ls', '-q'])) {
    containerIds.push(...(await ctr(paths, ['-n', namespace, 'containers', 'ls', '-q'])));
    const tasks = await ctr(paths, ['-n', namespace, 'tasks', 'ls', '-q']);
    if (tasks.length === 0) continue;
    for (const task of tasks) await ctr(paths, ['-n', namespace, 'tasks', 'kill', '-s', 'SIGKILL', task]);
    // the CRI plugin deletes exited tasks itself; delete whatever is still listed
    await waitUntil(
      async () => {
        const left = await ctr(paths, ['-n', namespace, 'tasks', 'ls', '-q']);
        for (const task of left) await ctr(paths, ['-n', namespace, 'tasks', 'delete', '--force', task]);
        return left.length === 0;
      },
      { timeoutMs: 10_000, what: `tasks in namespace ${namespace} to go away`, intervalMs: 100 },
    ).catch((err: unknown) => log(`containerd: ${errorMessage(err)}`));
    log(`containerd: killed ${tasks.length} task(s) in namespace ${namespace}`);
  }
  return containerIds;
}

/** Shim sockets recorded in the task bundles (io.containerd.runtime.v2.task/<ns>/<id>/address). */
async function shimSocketsOf(paths: ClusterPaths): Promise<string[]> {
  const base = join(paths.containerd.state, 'io.containerd.runtime.v2.task');
  const sockets: string[] = [];
  for (const namespace of await readdir(base).catch(() => [])) {
    for (const id of await readdir(join(base, namespace)).catch(() => [])) {
      const address = (await readTextIfExists(join(base, namespace, id, 'address')))?.trim();
      const path = address?.replace(/^unix:\/\//, '');
      if (path?.startsWith(`${SHIM_SOCKET_DIR}/`)) sockets.push(path);
    }
  }
  return sockets;
}

async function stopContainerdAndShims(paths: ClusterPaths, log: (message: string) => void): Promise<void> {
  const c = paths.containerd;
  const shimSockets = await shimSocketsOf(paths);
  const pid = await stopDaemon(c.pidFile, c.config, STOP_GRACE_MS);
  if (pid !== undefined) log(`containerd: stopped (PID ${pid})`);
  const shims = findProcesses((args) => args[0]?.includes('containerd-shim') === true && args.includes(c.socket));
  for (const shim of shims) signal(shim, 'SIGKILL');
  if (shims.length > 0) {
    log(`containerd: killed ${shims.length} leftover shim(s)`);
    await waitUntil(() => shims.every((shim) => !isAlive(shim)), { timeoutMs: 5_000, what: 'shims to exit' });
  }
  for (const socket of shimSockets) await rm(socket, { force: true });
}

export function containerd(): ComponentWithStatus {
  return {
    name: 'containerd',
    async up(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      const c = paths.containerd;
      const registries = [requireEnv(ctx, 'REGISTRY', 'registries'), requireEnv(ctx, 'AUTH_REGISTRY', 'registries')];
      const configText = containerdConfig(c, paths.id, {
        sandboxImage: requireEnv(ctx, 'SANDBOX_IMAGE', 'test-images'),
        cniBinDir: requireEnv(ctx, 'CNI_BIN_DIR', 'pod-network'),
        cniConfDir: requireEnv(ctx, 'CNI_CONF_DIR', 'pod-network'),
        registries,
        ...containerdRuntime(ctx.dir),
      });
      for (const d of [c.root, c.state, c.opt, c.runcRoot, paths.logDir, paths.podLogDir]) {
        await mkdir(d, { recursive: true });
      }
      await writeRegistryHosts(paths, registries);
      const state = await ensureDaemon(
        {
          name: 'containerd',
          ...daemonCommand(paths),
          args: daemonArgs(paths),
          configFile: c.config,
          configText,
          pidFile: c.pidFile,
          logFile: c.log,
          stopGraceMs: STOP_GRACE_MS,
        },
        ctx.log,
      );
      const version = await waitForCri(paths, state.pid);
      if (state.started) {
        ctx.log(
          `containerd: CRI ${version.runtimeApiVersion} answers (${version.runtimeName} ${version.runtimeVersion})`,
        );
      }
      return {
        RUNTIME_SOCKET: c.socket,
        RUNTIME_ENDPOINT: `unix://${c.socket}`,
        CONTAINERD_PID_FILE: c.pidFile,
        CONTAINERD_CONFIG: c.config,
        CONTAINERD_ROOT: c.root,
        CONTAINERD_STATE: c.state,
        CONTAINERD_LOG: c.log,
        POD_CGROUP_PARENT: paths.podCgroupParent,
        POD_LOG_DIR: paths.podLogDir,
      };
    },
    async down(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      const c = paths.containerd;
      const pid = await runningPid(c.pidFile, c.config);
      const containerIds = pid !== undefined ? await removeAllTasks(paths, ctx.log) : [];
      await stopContainerdAndShims(paths, ctx.log);
      const leftCgroups = await removeCgroupTree(paths.podCgroupParent);
      // pods created without a cgroup parent land in containerd's default /k8s.io/<id>: remove ours only
      for (const id of containerIds) leftCgroups.push(...(await removeCgroupTree(`/k8s.io/${id}`)));
      if (leftCgroups.length > 0) ctx.log(`containerd: cgroups left behind: ${leftCgroups.join(', ')}`);
      const leftMounts = await unmountAllUnder(paths.dir);
      if (leftMounts.length > 0) ctx.log(`containerd: mounts left under ${paths.dir}: ${leftMounts.join(', ')}`);
      await rm(c.socket, { force: true });
      await rm(c.ttrpcSocket, { force: true });
      await rm(c.runcRoot, { recursive: true, force: true });
      // shared by every containerd on the machine: remove only when empty
      for (const shared of [
        SHIM_SOCKET_DIR,
        '/run/containerd/runc/k8s.io',
        '/run/containerd/runc',
        '/run/containerd',
      ]) {
        await rmdir(shared).catch(() => undefined);
      }
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const paths = clusterPaths(ctx.dir);
      const pid = await runningPid(paths.containerd.pidFile, paths.containerd.config);
      if (pid === undefined) return [{ name: 'containerd', healthy: false, detail: 'not running' }];
      try {
        const v = await criVersion(paths.containerd.socket);
        return [
          {
            name: 'containerd',
            healthy: true,
            detail: `PID ${pid}, CRI ${v.runtimeApiVersion} on ${paths.containerd.socket} (${v.runtimeVersion})`,
          },
        ];
      } catch (err) {
        return [
          { name: 'containerd', healthy: false, detail: `PID ${pid}, CRI does not answer: ${errorMessage(err)}` },
        ];
      }
    },
  };
}
