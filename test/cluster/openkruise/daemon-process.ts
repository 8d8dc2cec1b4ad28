// OpenKruise's kruise-daemon as a process inside a node of the real local cluster, as test/support/real-cluster.ts
// runs ours: in the node's network and mount namespaces (nsenter through the node's holder), with a kubeconfig and
// NODE_NAME. Its DaemonSet mounts the host's /var/run at /hostvarrun, the only place it looks for the CRI socket, so
// it runs in a private mount namespace of its own where hostvarrun-root.sh gives it that path (the node's /run);
// its PID is kruise-daemon's own (every step execs). klog's output goes to a file.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import type { NodeLayout } from '../k8s/layout.js';
import { runningPid } from '../runtime/processes.js';
import { waitFor } from '../../support/wait.js';
import { LoggedProcess, type Exit } from './logged-process.js';

/** Ports off OpenKruise's defaults (10221, 10222), which our agent also takes by default. */
export const OPENKRUISE_DAEMON_PORT = 10231;
export const OPENKRUISE_DAEMON_PPROF_PORT = 10232;

const HOSTVARRUN_ROOT = join(packageRoot(), 'test', 'cluster', 'openkruise', 'hostvarrun-root.sh');

export interface OpenKruiseDaemonOptions {
  /** The kruise-daemon binary (openKruiseBuild().daemon). */
  binary: string;
  node: NodeLayout;
  kubeconfig: string;
  /** klog's output (stderr and stdout). */
  logFile: string;
  /** Flags after --addr and --pprof-addr (e.g. --feature-gates, -v). */
  extraArgs?: readonly string[];
  env?: Readonly<Record<string, string>>;
}

export type { Exit };

export class OpenKruiseDaemonProcess extends LoggedProcess {
  /** http://<node ip>:<port>: /healthz and /metrics. */
  readonly url: string;

  private constructor(child: ChildProcess, url: string, logFile: string) {
    super(child, logFile);
    this.url = url;
  }

  /** Start it inside `options.node` (not waiting for it to be healthy: see healthy()). */
  static async start(options: OpenKruiseDaemonOptions): Promise<OpenKruiseDaemonProcess> {
    const { node } = options;
    const holder = await runningPid(node.holderPidFile, node.dir);
    if (holder === undefined) throw new Error(`${node.name}: its holder process is not running`);
    const root = join(node.dir, 'openkruise', 'root');
    mkdirSync(root, { recursive: true });
    const args = [
      '-t',
      String(holder),
      '--mount',
      '--net',
      '--',
      'unshare',
      '--mount',
      '--',
      'sh',
      HOSTVARRUN_ROOT,
      root,
      options.binary,
      `--addr=${node.ip}:${OPENKRUISE_DAEMON_PORT}`,
      `--pprof-addr=${node.ip}:${OPENKRUISE_DAEMON_PPROF_PORT}`,
      ...(options.extraArgs ?? []),
    ];
    mkdirSync(join(options.logFile, '..'), { recursive: true });
    const fd = openSync(options.logFile, 'a');
    try {
      const child = spawn('nsenter', args, {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          NODE_NAME: node.name,
          KUBECONFIG: options.kubeconfig,
          ...options.env,
        },
        stdio: ['ignore', fd, fd],
      });
      return new OpenKruiseDaemonProcess(child, `http://${node.ip}:${OPENKRUISE_DAEMON_PORT}`, options.logFile);
    } finally {
      closeSync(fd);
    }
  }

  /** Start it and wait for /healthz 200 (every informer synced); stopped again when that does not come. */
  static async startHealthy(options: OpenKruiseDaemonOptions, timeoutMs = 60_000): Promise<OpenKruiseDaemonProcess> {
    const daemon = await OpenKruiseDaemonProcess.start(options);
    try {
      await waitFor(() => daemon.healthy(), { timeoutMs, intervalMs: 100, message: 'kruise-daemon /healthz 200' });
    } catch (err) {
      await daemon.stop();
      throw err;
    }
    return daemon;
  }

  /** True once /healthz answers 200 (its NodeImage informer has synced); throws if the process has exited. */
  async healthy(): Promise<boolean> {
    this.assertRunning('kruise-daemon');
    try {
      const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2000) });
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** SIGTERM, then SIGKILL after the deadline, and wait for the exit. */
  stop(deadlineMs = 15_000): Promise<Exit> {
    return this.terminate(deadlineMs);
  }
}
