// The local runtime environment as tests get it from useCluster(): registries, test images, containerd with CRI,
// CNI; idempotent up; restartContainerd.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { upCluster } from '../../cluster/components.js';
import { parseEnvFile } from '../../cluster/env-file.js';
import { clusterPaths } from '../../cluster/paths.js';
import { criVersion } from '../../cluster/runtime/cri-probe.js';
import { missingPackages, REQUIRED_PACKAGES } from '../../cluster/runtime/host-packages.js';
import { run, runChecked } from '../../cluster/runtime/exec.js';
import { isAlive, readPidFile } from '../../cluster/runtime/processes.js';
import { restartContainerd, useCluster, type ClusterEnv } from '../../support/cluster.js';
import { rawCri } from './raw-cri.js';

const MANIFEST_ACCEPT =
  'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
  await response.body?.cancel();
  return response.status;
}

/** Manifest digest of an image reference host:port/repo:tag (undefined when absent). */
async function manifestDigest(reference: string, authorization?: string): Promise<string | undefined> {
  const match = /^([^/]+)\/(.+):([^:/]+)$/.exec(reference);
  assert.ok(match, `image reference ${reference}`);
  const headers: Record<string, string> = { accept: MANIFEST_ACCEPT };
  if (authorization) headers.authorization = authorization;
  const response = await fetch(`http://${match[1]}/v2/${match[2]}/manifests/${match[3]}`, {
    method: 'HEAD',
    headers,
    signal: AbortSignal.timeout(5_000),
  });
  return response.ok ? (response.headers.get('docker-content-digest') ?? undefined) : undefined;
}

async function daemonPids(env: ClusterEnv): Promise<Record<string, number | undefined>> {
  const paths = clusterPaths(env.dir);
  return {
    containerd: await readPidFile(paths.containerd.pidFile),
    registry: await readPidFile(paths.registry.openPidFile),
    registryAuth: await readPidFile(paths.registry.authPidFile),
  };
}

describe('local cluster: runtime environment', function () {
  let env: ClusterEnv;

  before(async function () {
    env = await useCluster();
  });

  it('serves the open registry and asks for credentials on the auth registry', async () => {
    assert.equal(await status(`http://${env.registry}/v2/`), 200);
    assert.equal(await status(`http://${env.authRegistry}/v2/`), 401);
    assert.equal(await status(`http://${env.authRegistry}/v2/`, { authorization: basic(env.authUser, 'wrong') }), 401);
    assert.equal(
      await status(`http://${env.authRegistry}/v2/`, { authorization: basic(env.authUser, env.authPassword) }),
      200,
    );
  });

  it('holds the manifests of the four test images; busybox 1.0 and 2.0 differ', async () => {
    const auth = basic(env.authUser, env.authPassword);
    const pause = await manifestDigest(env.images.pause);
    const one = await manifestDigest(env.images.busybox1);
    const two = await manifestDigest(env.images.busybox2);
    const authOne = await manifestDigest(env.images.authBusybox1, auth);
    assert.match(pause ?? '', /^sha256:/, 'pause');
    assert.match(one ?? '', /^sha256:/, 'busybox:1.0');
    assert.match(two ?? '', /^sha256:/, 'busybox:2.0');
    assert.notEqual(one, two);
    assert.equal(authOne, one, 'the auth registry holds the same busybox:1.0');
    assert.equal(await manifestDigest(env.images.authBusybox1), undefined, 'no manifest without credentials');
    assert.equal(env.sandboxImage, `${env.registry}/test/pause:3.9`);
  });

  it('runs containerd with the CRI plugin ok on the private socket', async () => {
    const version = await criVersion(env.runtimeSocket);
    assert.equal(version.runtimeName, 'containerd');
    assert.equal(version.runtimeApiVersion, 'v1');
    const plugins = await runChecked('ctr', ['--address', env.runtimeSocket, 'plugins', 'ls']);
    assert.match(plugins, /^io\.containerd\.grpc\.v1\s+cri\s+.*\sok\s*$/m);
  });

  it('writes an env file a shell can source, private to root', async () => {
    const paths = clusterPaths(env.dir);
    assert.equal(statSync(paths.envFile).mode & 0o777, 0o600);
    assert.equal(statSync(paths.registry.credentials).mode & 0o777, 0o600);
    const fromShell = await runChecked('sh', [
      '-c',
      `. "$1" && printf '%s|%s|%s' "$RUNTIME_SOCKET" "$AUTH_PASSWORD" "$POD_SUBNET"`,
      'sh',
      paths.envFile,
    ]);
    assert.equal(fromShell, `${env.runtimeSocket}|${env.authPassword}|${env.podSubnet}`);
    assert.deepEqual(parseEnvFile(await readFile(paths.envFile, 'utf8')), env.vars);
    assert.match(env.podSubnet, /^10\.(\d+)\.0\.0\/16$/);
    assert.notEqual(env.podSubnet, '10.88.0.0/16');
    assert.ok(env.podBridge.length <= 15, env.podBridge);
  });

  it('runs a pod: sandbox from the pause image, an IP from the pod subnet, a full busybox userland', async function () {
    const cri = rawCri(env.runtimeSocket);
    const uid = `cluster-test-${process.pid}-${Date.now()}`;
    const sandboxConfig = {
      metadata: { name: 'env-check', uid, namespace: 'cluster-test', attempt: 0 },
      hostname: 'env-check',
      linux: { cgroup_parent: `${env.podCgroupParent}/pod${uid}` },
    };
    let sandboxId: string | undefined;
    try {
      await cri.image('PullImage', { image: { image: env.images.busybox2 } });
      sandboxId = ((await cri.runtime('RunPodSandbox', { config: sandboxConfig })) as { pod_sandbox_id: string })
        .pod_sandbox_id;
      const sandbox = await cri.runtime('PodSandboxStatus', { pod_sandbox_id: sandboxId });
      const ip: string = sandbox.status.network.ip;
      const prefix = env.podSubnet.split('.').slice(0, 2).join('.');
      assert.ok(ip.startsWith(`${prefix}.`), `pod IP ${ip} in ${env.podSubnet}`);
      const { container_id: containerId } = await cri.runtime('CreateContainer', {
        pod_sandbox_id: sandboxId,
        sandbox_config: sandboxConfig,
        config: {
          metadata: { name: 'main', attempt: 0 },
          image: { image: env.images.busybox2 },
          command: ['sleep', '3600'],
          envs: [{ key: 'CHECK', value: 'from-cri' }],
        },
      });
      await cri.runtime('StartContainer', { container_id: containerId });
      const exec = await cri.runtime('ExecSync', {
        container_id: containerId,
        cmd: [
          'sh',
          '-c',
          'cat /VERSION; env | grep ^CHECK=; for a in sh sleep env cat wget; do test -x /bin/$a && echo $a; done; ls /bin | wc -l',
        ],
        timeout: 10,
      });
      assert.equal(exec.exit_code, 0, String(exec.stderr));
      const lines = String(exec.stdout).trim().split('\n');
      assert.deepEqual(lines.slice(0, -1), [
        'kruise-daemon test busybox 2.0',
        'CHECK=from-cri',
        'sh',
        'sleep',
        'env',
        'cat',
        'wget',
      ]);
      assert.ok(Number(lines.at(-1)) > 250, `every busybox applet is linked in /bin (${lines.at(-1)} entries)`);
      // the pod is reachable from the host through the bridge
      const ping = await run('busybox', ['ping', '-c', '1', '-W', '2', ip]);
      assert.equal(ping.code, 0, ping.stdout + ping.stderr);
    } finally {
      if (sandboxId) {
        await cri.runtime('StopPodSandbox', { pod_sandbox_id: sandboxId });
        await cri.runtime('RemovePodSandbox', { pod_sandbox_id: sandboxId });
      }
      cri.close();
    }
  });

  it('finds the required Debian packages installed and tells a missing one apart', async () => {
    const names = Object.keys(REQUIRED_PACKAGES);
    assert.deepEqual(await missingPackages(names), []);
    assert.deepEqual(await missingPackages(['containerd', 'kd-no-such-package']), ['kd-no-such-package']);
  });

  it('a second up is a no-op: same daemons, same variables', async () => {
    const before = await daemonPids(env);
    for (const pid of Object.values(before)) assert.ok(pid !== undefined && isAlive(pid));
    const vars = await upCluster({ dir: env.dir, log: () => undefined });
    assert.deepEqual(await daemonPids(env), before);
    assert.deepEqual(vars, env.vars);
  });

  it('restartContainerd starts a new containerd that answers CRI', async () => {
    const oldPid = await readPidFile(clusterPaths(env.dir).containerd.pidFile);
    assert.ok(oldPid !== undefined);
    const newPid = await restartContainerd(env);
    assert.notEqual(newPid, oldPid);
    assert.equal(isAlive(oldPid), false);
    assert.equal(await readPidFile(clusterPaths(env.dir).containerd.pidFile), newPid);
    assert.equal((await criVersion(env.runtimeSocket)).runtimeApiVersion, 'v1');
  });
});
