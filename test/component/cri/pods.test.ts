// Pod sandbox and container lifecycle through the CRI client on the real containerd: run a sandbox (private
// cgroup parent, log directory under the cluster dir), create and start a container with env, a host mount,
// resources and a log path, exec in it, stop, remove.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { removeCgroupTree } from '../../cluster/runtime/cgroups.js';
import {
  connectRuntime,
  CriNotFoundError,
  type ContainerConfig,
  type CriClient,
  type PodSandboxConfig,
} from '../../../src/cri/index.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';

describe('cri client: pod sandbox and container lifecycle (real containerd)', function () {
  let env: ClusterEnv;
  let client: CriClient;
  const uid = randomUUID();
  let sandboxConfig: PodSandboxConfig;
  let sandboxId = '';
  let containerId = '';
  let hostDir = '';
  let logDir = '';

  before(async function () {
    env = await useCluster();
    client = await connectRuntime({ socket: env.runtimeSocket, env: {} });
    hostDir = join(env.dir, 'cri-test', uid);
    mkdirSync(hostDir, { recursive: true });
    writeFileSync(join(hostDir, 'greeting.txt'), 'from the host\n');
    logDir = join(env.podLogDir, `cri-test_lifecycle_${uid}`);
    mkdirSync(logDir, { recursive: true });
    sandboxConfig = {
      metadata: { name: 'lifecycle', namespace: 'cri-test', uid, attempt: 0 },
      hostname: 'lifecycle',
      log_directory: logDir,
      dns_config: { servers: ['10.96.0.10'], searches: ['cri-test.svc.cluster.local'], options: ['ndots:5'] },
      labels: { 'io.kubernetes.pod.name': 'lifecycle', 'io.kubernetes.pod.namespace': 'cri-test' },
      annotations: { 'kruise-daemon.test/case': 'lifecycle' },
      linux: {
        cgroup_parent: `${env.podCgroupParent}/pod${uid}`,
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    };
  });

  after(async function () {
    if (client) {
      if (sandboxId) {
        await client.stopPodSandbox({ pod_sandbox_id: sandboxId }).catch(() => undefined);
        await client.removePodSandbox({ pod_sandbox_id: sandboxId }).catch(() => undefined);
      }
      client.close();
    }
    if (env) await removeCgroupTree(`${env.podCgroupParent}/pod${uid}`).catch(() => undefined);
    if (hostDir) await rm(hostDir, { recursive: true, force: true });
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it('runs a pod sandbox that is ready, with its labels, annotations and an IP', async function () {
    const r = await client.runPodSandbox({ config: sandboxConfig });
    sandboxId = r.pod_sandbox_id;
    assert.match(sandboxId, /^[0-9a-f]{64}$/);
    const { status } = await client.podSandboxStatus({ pod_sandbox_id: sandboxId });
    assert.equal(status?.state, 'SANDBOX_READY');
    assert.equal(status?.metadata?.uid, uid);
    assert.equal(status?.annotations['kruise-daemon.test/case'], 'lifecycle');
    assert.ok(status?.network?.ip, 'sandbox has no IP');
    const { items } = await client.listPodSandbox({
      filter: { label_selector: { 'io.kubernetes.pod.name': 'lifecycle' } },
    });
    assert.ok(items.some((s) => s.id === sandboxId));
  });

  it('creates and starts a container with env, a read-only host mount, resources and a log file', async function () {
    await client.pullImage({ image: { image: env.images.busybox1 } });
    const config: ContainerConfig = {
      metadata: { name: 'app', attempt: 0 },
      image: { image: env.images.busybox1 },
      command: ['sh', '-c'],
      args: ['echo "started as $GREETING"; exec sleep 3600'],
      envs: [{ key: 'GREETING', value: 'hello-cri' }],
      mounts: [{ container_path: '/host', host_path: hostDir, readonly: true }],
      labels: { 'io.kubernetes.container.name': 'app' },
      log_path: 'app/0.log',
      linux: {
        resources: { cpu_shares: 256, memory_limit_in_bytes: 64 * 1024 * 1024 },
        security_context: { run_as_user: { value: 0 } },
      },
    };
    const created = await client.createContainer({ pod_sandbox_id: sandboxId, config, sandbox_config: sandboxConfig });
    containerId = created.container_id;
    assert.equal((await client.containerStatus({ container_id: containerId })).status?.state, 'CONTAINER_CREATED');
    await client.startContainer({ container_id: containerId });
    const { status } = await client.containerStatus({ container_id: containerId });
    assert.equal(status?.state, 'CONTAINER_RUNNING');
    assert.equal(status?.log_path, join(logDir, 'app/0.log'));
    assert.ok(status?.mounts.some((m) => m.container_path === '/host' && m.readonly));
    const log = await waitFor(
      async () => {
        const text = await readFile(join(logDir, 'app/0.log'), 'utf8').catch(() => '');
        return text.includes('started as hello-cri') && text;
      },
      { message: 'the container log line' },
    );
    assert.match(log, /stdout F started as hello-cri/);
    const { containers } = await client.listContainers({ filter: { pod_sandbox_id: sandboxId } });
    assert.deepEqual(
      containers.map((c) => [c.id, c.state]),
      [[containerId, 'CONTAINER_RUNNING']],
    );
  });

  it('ExecSync runs a command and returns its output and exit code', async function () {
    const r = await client.execSync({
      container_id: containerId,
      cmd: ['sh', '-c', 'echo "$GREETING"; cat /host/greeting.txt; echo oops >&2; exit 3'],
      timeout: 10,
    });
    assert.equal(r.stdout.toString(), 'hello-cri\nfrom the host\n');
    assert.equal(r.stderr.toString(), 'oops\n');
    assert.equal(r.exit_code, 3);
    const ro = await client.execSync({ container_id: containerId, cmd: ['sh', '-c', 'touch /host/x'] });
    assert.notEqual(ro.exit_code, 0, 'the host mount should be read-only');
  });

  it('stops the container (exited with the TERM status), then removes it', async function () {
    await client.stopContainer({ container_id: containerId, timeout: 5 });
    const { status } = await client.containerStatus({ container_id: containerId });
    assert.equal(status?.state, 'CONTAINER_EXITED');
    assert.equal(status?.exit_code, 143);
    assert.ok(Number(status?.finished_at) > 0);
    await client.stopContainer({ container_id: containerId, timeout: 5 }); // idempotent
    await client.removeContainer({ container_id: containerId });
    const gone = await client.containerStatus({ container_id: containerId }).catch((e: unknown) => e);
    assert.ok(gone instanceof CriNotFoundError, String(gone));
    await client.removeContainer({ container_id: containerId }); // idempotent
  });

  it('stops and removes the sandbox', async function () {
    await client.stopPodSandbox({ pod_sandbox_id: sandboxId });
    assert.equal((await client.podSandboxStatus({ pod_sandbox_id: sandboxId })).status?.state, 'SANDBOX_NOTREADY');
    await client.removePodSandbox({ pod_sandbox_id: sandboxId });
    const gone = await client.podSandboxStatus({ pod_sandbox_id: sandboxId }).catch((e: unknown) => e);
    assert.ok(gone instanceof CriNotFoundError, String(gone));
    const { items } = await client.listPodSandbox();
    assert.ok(!items.some((s) => s.id === sandboxId));
    sandboxId = '';
  });
});
