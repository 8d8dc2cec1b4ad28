// A kubelet-lite process for an e2e stack that runs its own API emulator: its nodes on the local cluster's
// containerd, its config, state and log under the stack's directory. Resolves once its nodes are registered.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KUBELET_LITE_MAIN } from '../cluster/kubelet-lite/component.js';
import type { KubeletLiteConfig } from '../cluster/kubelet-lite/process-config.js';
import type { ClusterEnv } from './cluster.js';
import { waitFor } from './wait.js';

export interface E2eKubeletLiteOptions {
  cluster: ClusterEnv;
  /** The stack's emulator. */
  kubeconfig: string;
  nodes: string[];
  /** Where config, state, ready file and log go. */
  dir: string;
  /** kubelet-lite timer scale (default 1: kubelet's own timers). */
  timeScale?: number;
}

export interface E2eKubeletLite {
  child: ChildProcess;
  log(): Promise<string>;
  /** SIGTERM and wait for the exit (the pods keep running, as with kubelet). */
  stop(): Promise<void>;
}

export async function startE2eKubeletLite(options: E2eKubeletLiteOptions): Promise<E2eKubeletLite> {
  const { cluster, dir } = options;
  const config: KubeletLiteConfig = {
    nodes: [...options.nodes],
    kubeconfig: options.kubeconfig,
    runtimeSocket: cluster.runtimeSocket,
    podCgroupParent: cluster.podCgroupParent,
    podLogDir: cluster.podLogDir,
    stateDir: join(dir, 'kubelet-state'),
    readyFile: join(dir, 'kubelet-ready'),
    hostIP: '127.0.0.1',
    timeScale: options.timeScale ?? 1,
  };
  const configFile = join(dir, 'kubelet-lite.json');
  await writeFile(configFile, JSON.stringify(config));
  const logFile = join(dir, 'kubelet-lite.log');
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [KUBELET_LITE_MAIN, '--config', configFile], {
      stdio: ['ignore', fd, fd],
      env: process.env,
    });
  } finally {
    closeSync(fd);
  }
  const handle: E2eKubeletLite = {
    child,
    log: () => readFile(logFile, 'utf8'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`kubelet-lite exited: ${await handle.log()}`);
        return readFile(config.readyFile, 'utf8').then(
          () => true,
          () => false,
        );
      },
      { timeoutMs: 30_000, message: `kubelet-lite to register ${options.nodes.join(', ')}` },
    );
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}
