// A private kubelet-lite process for tests, beside the cluster's own: its own node names and time scale, on the
// cluster's containerd and API emulator. stop() is SIGTERM (pods keep running), kill() is SIGKILL; cleanUp()
// force-deletes the pods of its nodes, removes their sandboxes and deletes the Node objects.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CriClient } from '../../../src/cri/index.js';
import { KUBELET_LITE_MAIN, removeKubeletLiteSandboxes } from '../../cluster/kubelet-lite/component.js';
import { NODE_LABEL } from '../../cluster/kubelet-lite/labels.js';
import type { KubeletLiteConfig } from '../../cluster/kubelet-lite/process-config.js';
import { CoreResources, KubeClient, loadConnection, type KubeObject } from '../../../src/kube/index.js';
import type { ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';

export class KubeletLiteProcess {
  private child?: ChildProcess;
  private output = '';
  readonly config: KubeletLiteConfig;
  readonly dir: string;

  constructor(
    readonly cluster: ClusterEnv,
    readonly nodes: string[],
    timeScale: number,
  ) {
    this.dir = join(cluster.dir, 'kubelet-lite-tests', nodes[0]!);
    this.config = {
      nodes,
      kubeconfig: cluster.vars.KUBECONFIG!,
      runtimeSocket: cluster.runtimeSocket,
      podCgroupParent: cluster.podCgroupParent,
      podLogDir: cluster.vars.POD_LOG_DIR ?? join(cluster.dir, 'pod-logs'),
      stateDir: join(this.dir, 'state'),
      readyFile: join(this.dir, 'ready.json'),
      hostIP: '127.0.0.1',
      timeScale,
    };
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get log(): string {
    return this.output;
  }

  /** Start and resolve once every node is registered and its pods listed. */
  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await rm(this.config.readyFile, { force: true });
    const configFile = join(this.dir, 'config.json');
    await writeFile(configFile, JSON.stringify(this.config));
    const child = spawn(process.execPath, [KUBELET_LITE_MAIN, '--config', configFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    });
    this.child = child;
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-200_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    await waitFor(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`kubelet-lite exited (${child.exitCode}): ${this.output.slice(-2000)}`);
        const text = await readFile(this.config.readyFile, 'utf8').catch(() => '');
        return text.includes(`"pid":${child.pid}`);
      },
      { timeoutMs: 30_000, message: `kubelet-lite for ${this.nodes.join(',')} to be ready` },
    ).catch((err: unknown) => {
      if (child.exitCode !== null)
        throw new Error(`kubelet-lite exited (${child.exitCode}): ${this.output.slice(-2000)}`);
      throw err;
    });
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }

  /** SIGTERM: kubelet-lite stops watching; the pods keep running. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** SIGKILL, as a crash. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  /** Sandboxes on the runtime labelled with one of this process's nodes. */
  async sandboxCount(): Promise<number> {
    const cri = new CriClient({ socket: this.config.runtimeSocket });
    try {
      const { items } = await cri.listPodSandbox({});
      return items.filter((s) => this.nodes.includes(s.labels?.[NODE_LABEL] ?? '')).length;
    } finally {
      cri.close();
    }
  }

  /** Force-delete the pods of these nodes, stop the process, remove their sandboxes and Node objects. */
  async cleanUp(): Promise<void> {
    const kube = new KubeClient(await loadConnection({ kubeconfig: this.config.kubeconfig }));
    try {
      for (const node of this.nodes) {
        const pods = await kube
          .list(CoreResources.pods, { fieldSelector: `spec.nodeName=${node}` })
          .catch(() => undefined);
        for (const pod of pods?.items ?? []) {
          await kube
            .delete(CoreResources.pods, pod.metadata!.name!, {
              namespace: pod.metadata!.namespace,
              gracePeriodSeconds: 0,
            })
            .catch(() => undefined);
        }
      }
      // a running kubelet-lite cleans up after force-deleted pods (sandbox, cgroup, logs); wait for it, then stop
      if (this.child && this.child.exitCode === null) {
        await waitFor(async () => (await this.sandboxCount()) === 0, {
          timeoutMs: 30_000,
          message: `kubelet-lite to remove the sandboxes of ${this.nodes.join(',')}`,
        }).catch(() => undefined);
      }
      await this.stop();
      for (const node of this.nodes) {
        await removeKubeletLiteSandboxes(this.config.runtimeSocket, node, this.config.podCgroupParent);
        await kube.delete(CoreResources.nodes, node).catch(() => undefined);
        await kube.delete(CoreResources.leases, node, { namespace: 'kube-node-lease' }).catch(() => undefined);
      }
    } finally {
      kube.close();
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A unique suffix for names in one test run. */
export function uniqueSuffix(): string {
  return Math.random().toString(36).slice(2, 7);
}

export type { KubeObject };
