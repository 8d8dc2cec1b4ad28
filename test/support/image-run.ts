// Running the kruise-daemon image (test/cluster/image) through containerd's CRI as kubelet would: one pod sandbox
// (this cluster's cgroup parent, a log directory under the cluster dir), containers from the image, their CRI logs.
// Shared by test/component/cluster/image.test.ts and the `image` benchmark; close() removes everything it made.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerConfig, CriClient, PodSandboxConfig } from '../../src/cri/index.js';
import { removeCgroupTree } from '../cluster/runtime/cgroups.js';
import type { ClusterEnv } from './cluster.js';
import { waitFor } from './wait.js';

/** A kubeconfig naming an API server that is not there: the agent's informers wait, its runtime check does not. */
const NO_API_SERVER_KUBECONFIG = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]',
  'users: [{name: none, user: {token: none}}]',
  'contexts: [{name: none, context: {cluster: none, user: none}}]',
  'current-context: none',
  '',
].join('\n');

/** The text a container wrote, from its CRI log file (`<time> <stream> <tag> <text>` lines). */
async function logText(path: string): Promise<string> {
  const raw = await readFile(path, 'utf8').catch(() => '');
  return raw
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').slice(3).join(' '))
    .join('\n');
}

export interface Started {
  id: string;
  /** Date.now() just before StartContainer. */
  startedAt: number;
}

export class ImagePod {
  private constructor(
    private readonly client: CriClient,
    private readonly env: ClusterEnv,
    private readonly image: string,
    private readonly uid: string,
    private readonly config: PodSandboxConfig,
    private readonly logDir: string,
    private readonly hostDir: string,
    readonly sandboxId: string,
    readonly ip: string,
  ) {}

  /** Run a pod sandbox for containers of `image` (which must be present). */
  static async open(client: CriClient, env: ClusterEnv, image: string, name: string): Promise<ImagePod> {
    const uid = randomUUID();
    const logDir = join(env.podLogDir, `image-test_${name}_${uid}`);
    const hostDir = join(env.dir, 'image-test', uid);
    await mkdir(logDir, { recursive: true });
    await mkdir(hostDir, { recursive: true });
    const config: PodSandboxConfig = {
      metadata: { name, namespace: 'image-test', uid, attempt: 0 },
      hostname: name,
      log_directory: logDir,
      labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'image-test' },
      linux: {
        cgroup_parent: `${env.podCgroupParent}/pod${uid}`,
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
    let sandboxId = '';
    try {
      sandboxId = (await client.runPodSandbox({ config })).pod_sandbox_id;
      const ip = (await client.podSandboxStatus({ pod_sandbox_id: sandboxId })).status?.network?.ip ?? '';
      if (!ip) throw new Error(`sandbox ${sandboxId} has no IP`);
      return new ImagePod(client, env, image, uid, config, logDir, hostDir, sandboxId, ip);
    } catch (err) {
      await ImagePod.remove(client, env, sandboxId, uid, logDir, hostDir);
      throw err;
    }
  }

  private static async remove(
    client: CriClient,
    env: ClusterEnv,
    sandboxId: string,
    uid: string,
    logDir: string,
    hostDir: string,
  ): Promise<void> {
    if (sandboxId) {
      await client.stopPodSandbox({ pod_sandbox_id: sandboxId }).catch(() => undefined);
      await client.removePodSandbox({ pod_sandbox_id: sandboxId }).catch(() => undefined);
    }
    await removeCgroupTree(`${env.podCgroupParent}/pod${uid}`).catch(() => undefined);
    await rm(logDir, { recursive: true, force: true });
    await rm(hostDir, { recursive: true, force: true });
  }

  /** Stop and remove the sandbox (and its containers), its cgroups, logs and host files. */
  async close(): Promise<void> {
    await ImagePod.remove(this.client, this.env, this.sandboxId, this.uid, this.logDir, this.hostDir);
  }

  /** Create and start a container of the image (command/args/envs/mounts/linux as given). */
  async start(name: string, extra: Partial<ContainerConfig>): Promise<Started> {
    const config: ContainerConfig = {
      metadata: { name, attempt: 0 },
      image: { image: this.image },
      labels: { 'io.kubernetes.container.name': name },
      log_path: `${name}/0.log`,
      ...extra,
    };
    const { container_id: id } = await this.client.createContainer({
      pod_sandbox_id: this.sandboxId,
      config,
      sandbox_config: this.config,
    });
    const startedAt = Date.now();
    await this.client.startContainer({ container_id: id });
    return { id, startedAt };
  }

  /** Start a container, wait for it to exit; its output, exit code and the time from StartContainer to exit. */
  async runToExit(
    name: string,
    extra: Partial<ContainerConfig>,
  ): Promise<{ out: string; exitCode: number; ms: number }> {
    const { id, startedAt } = await this.start(name, extra);
    const status = await waitFor(
      async () => {
        const { status: s } = await this.client.containerStatus({ container_id: id });
        return s?.state === 'CONTAINER_EXITED' && s;
      },
      { timeoutMs: 60_000, intervalMs: 20, message: `${name} to exit` },
    );
    const ms = Date.now() - startedAt;
    const out = await logText(join(this.logDir, name, '0.log'));
    await this.client.removeContainer({ container_id: id });
    return { out, exitCode: status.exit_code, ms };
  }

  /**
   * Start the agent as the DaemonSet runs it (root, read-only root filesystem, the DaemonSet's NODE_OPTIONS), with
   * the runtime's socket mounted where discovery finds it and no API server; returns its /healthz URL.
   */
  async startAgent(name = 'agent'): Promise<Started & { healthz: string }> {
    const kubeconfig = join(this.hostDir, 'kubeconfig');
    await writeFile(kubeconfig, NO_API_SERVER_KUBECONFIG);
    const started = await this.start(name, {
      args: ['--addr=:10221', '--host-run-dir=/hostvarrun', '--kubeconfig=/etc/kruise/kubeconfig'],
      envs: [
        { key: 'NODE_NAME', value: 'image-test-node' },
        { key: 'NODE_OPTIONS', value: '--max-semi-space-size=1 --max-old-space-size=64' },
      ],
      mounts: [
        { container_path: '/hostvarrun/containerd/containerd.sock', host_path: this.env.runtimeSocket },
        { container_path: '/etc/kruise/kubeconfig', host_path: kubeconfig, readonly: true },
      ],
      linux: { security_context: { run_as_user: { value: 0 }, readonly_rootfs: true } },
    });
    return { ...started, healthz: `http://${this.ip}:10221/healthz?verbose` };
  }

  /** Stop a container (SIGTERM, then `timeoutSeconds`), remove it; returns its exit code. */
  async stop(id: string, timeoutSeconds = 10): Promise<number> {
    await this.client.stopContainer({ container_id: id, timeout: timeoutSeconds });
    const { status } = await this.client.containerStatus({ container_id: id });
    await this.client.removeContainer({ container_id: id });
    return status?.exit_code ?? -1;
  }
}

/** Wait until `url` answers at all (any status); resolves with the time since `since`. */
export async function waitForAnswer(url: string, since: number, timeoutMs = 60_000): Promise<number> {
  await waitFor(
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      return true;
    },
    { timeoutMs, intervalMs: 20, message: `${url} to answer` },
  );
  return Date.now() - since;
}

/** Wait until the body of `url` contains `text`; resolves with the body. */
export async function waitForBody(url: string, text: string, timeoutMs = 30_000): Promise<string> {
  return waitFor(
    async () => {
      const body = await (await fetch(url, { signal: AbortSignal.timeout(1_000) })).text();
      return body.includes(text) && body;
    },
    { timeoutMs, intervalMs: 20, message: `${url} to say ${text}` },
  );
}
