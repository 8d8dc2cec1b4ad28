// The kruise-daemon image as the cluster script builds it (test/cluster/image, umoci, no Docker engine): its config and
// layers, then run through containerd's CRI like kubelet runs it: `kruise-daemon --help` (the entry point) and
// `kruise-controller --help` (the Deployment's command) as the image's user, and the agent itself, root as the
// DaemonSet runs it, until /healthz answers and says the runtime (the mounted CRI socket) is ok. Prints the sizes and
// the cold-start times (pull, first --help output, /healthz answering) on stderr.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRuntime, type ContainerConfig, type CriClient, type PodSandboxConfig } from '../../../src/cri/index.js';
import { pluginModules } from '../../../src/daemon/ipreservation/install.js';
import { ensureImage, imageSizes, type BuiltImage, type ImageSizes } from '../../cluster/image/build.js';
import { pushImage } from '../../cluster/image/component.js';
import { APP_DIR, IMAGE_COMMANDS, IMAGE_CONFIG } from '../../cluster/image/spec.js';
import { removeCgroupTree } from '../../cluster/runtime/cgroups.js';
import { runChecked } from '../../cluster/runtime/exec.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';

const DEV_ONLY = ['typescript', 'mocha', 'eslint', 'prettier', 'fast-check', 'node', 'pino-pretty', '@types/mocha'];

interface OciConfig {
  config: {
    Entrypoint?: string[];
    Cmd?: string[];
    User?: string;
    Env?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, object>;
  };
  architecture: string;
  os: string;
}

function blob(layout: string, digest: string): string {
  return join(layout, 'blobs', ...digest.split(':'));
}

/** The text a container wrote, from its CRI log file (`<time> <stream> <tag> <text>` lines). */
async function logText(path: string): Promise<string> {
  const raw = await readFile(path, 'utf8').catch(() => '');
  return raw
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').slice(3).join(' '))
    .join('\n');
}

describe('the kruise-daemon image (umoci, no Docker engine) run through containerd', function () {
  this.timeout(300_000);
  let env: ClusterEnv;
  let image: BuiltImage;
  let ref = '';
  let client: CriClient;
  let sizes: ImageSizes;
  const uid = randomUUID();
  const figures: Record<string, number> = {};
  let sandboxConfig: PodSandboxConfig;
  let sandboxId = '';
  let podIp = '';
  let logDir = '';
  let hostDir = '';
  let layerFiles: string[][] = [];
  let config: OciConfig;

  before(async function () {
    env = await useCluster();
    const started = Date.now();
    const outDir = fileURLToPath(new URL('../../../', import.meta.url));
    image = await ensureImage({ log: () => undefined, outDir });
    figures.ensureImageMs = Date.now() - started;
    ref = await pushImage(image, env.registry);
    sizes = await imageSizes(image.layout, image.tag);
    const manifest = JSON.parse(await readFile(blob(image.layout, image.manifestDigest), 'utf8')) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    config = JSON.parse(await readFile(blob(image.layout, manifest.config.digest), 'utf8')) as OciConfig;
    layerFiles = [];
    for (const layer of manifest.layers) {
      const listing = await runChecked('tar', ['-tzf', blob(image.layout, layer.digest)], { timeoutMs: 120_000 });
      layerFiles.push(listing.split('\n').map((p) => p.replace(/^\.?\//, '').replace(/\/$/, '')));
    }
    client = await connectRuntime({ socket: env.runtimeSocket, env: {} });
    logDir = join(env.podLogDir, `image-test_kruise_${uid}`);
    hostDir = join(env.dir, 'image-test', uid);
    await mkdir(logDir, { recursive: true });
    await mkdir(hostDir, { recursive: true });
    sandboxConfig = {
      metadata: { name: 'kruise', namespace: 'image-test', uid, attempt: 0 },
      hostname: 'kruise',
      log_directory: logDir,
      labels: { 'io.kubernetes.pod.name': 'kruise', 'io.kubernetes.pod.namespace': 'image-test' },
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
      if (ref) await client.removeImage({ image: { image: ref } }).catch(() => undefined);
      client.close();
    }
    if (env) await removeCgroupTree(`${env.podCgroupParent}/pod${uid}`).catch(() => undefined);
    if (logDir) await rm(logDir, { recursive: true, force: true });
    if (hostDir) await rm(hostDir, { recursive: true, force: true });
    if (sizes) {
      process.stderr.write(
        `      image ${image.tag}: ${(sizes.compressedBytes / 1e6).toFixed(1)} MB compressed, ` +
          `${(sizes.unpackedBytes / 1e6).toFixed(1)} MB unpacked; ${JSON.stringify(figures)}\n`,
      );
    }
  });

  it('is configured as the Dockerfile says: entry point, non-root user, env, working dir, ports, platform', function () {
    assert.deepEqual(config.config.Entrypoint, [...IMAGE_CONFIG.entrypoint]);
    assert.equal(config.config.Cmd, undefined);
    assert.equal(config.config.User, IMAGE_CONFIG.user);
    assert.ok(config.config.Env?.includes('NODE_ENV=production'));
    assert.ok(config.config.Env?.includes(`PATH=${IMAGE_CONFIG.env.PATH}`));
    assert.equal(config.config.WorkingDir, APP_DIR);
    assert.deepEqual(Object.keys(config.config.ExposedPorts ?? {}).sort(), [...IMAGE_CONFIG.exposedPorts].sort());
    assert.equal(config.os, 'linux');
  });

  it('has four layers: the Debian base, Node, production dependencies only, the app with every command', function () {
    assert.equal(layerFiles.length, 4);
    const [base, node, deps, app] = layerFiles as [string[], string[], string[], string[]];
    for (const file of ['lib64/ld-linux-x86-64.so.2', 'usr/bin/env', 'etc/passwd', 'etc/ld.so.cache']) {
      if (process.arch === 'x64' || file !== 'lib64/ld-linux-x86-64.so.2') assert.ok(base.includes(file), file);
    }
    assert.ok(!base.some((f) => f.startsWith('usr/share/man/') || f.includes('/gconv/')), 'docs and gconv pruned');
    assert.ok(!base.some((f) => f === 'bin/sh' || f === 'usr/bin/sh'), 'no shell');
    assert.ok(node.includes('usr/local/bin/node'));
    const modules = 'opt/kruise-daemon/node_modules/';
    for (const dep of ['@grpc/grpc-js', 'pino', '@kubernetes/client-node', 'js-yaml']) {
      assert.ok(deps.includes(`${modules}${dep}/package.json`), dep);
    }
    for (const dev of DEV_ONLY)
      assert.ok(!deps.includes(`${modules}${dev}/package.json`), `${dev} is a dev dependency`);
    for (const [command, entry] of Object.entries(IMAGE_COMMANDS)) {
      assert.ok(app.includes(`usr/local/bin/${command}`), command);
      assert.ok(app.includes(`opt/kruise-daemon/${entry}`), entry);
    }
    assert.ok(app.includes('opt/kruise-daemon/proto/api.proto'));
    assert.ok(!app.some((f) => f.includes('/dist/test/')), 'no test code');
    const outDir = fileURLToPath(new URL('../../../', import.meta.url));
    for (const rel of pluginModules(outDir))
      assert.ok(app.includes(`opt/kruise-daemon/dist/${rel}`), `kruise-ipam: ${rel}`);
  });

  it('is pulled from the local registry into a containerd that did not have it', async function () {
    await client.removeImage({ image: { image: ref } }).catch(() => undefined);
    const started = Date.now();
    const pulled = await client.pullImage({ image: { image: ref } });
    figures.coldPullMs = Date.now() - started;
    assert.match(pulled.image_ref, /^sha256:[0-9a-f]{64}$/);
    const sandbox = await client.runPodSandbox({ config: sandboxConfig });
    sandboxId = sandbox.pod_sandbox_id;
    podIp = (await client.podSandboxStatus({ pod_sandbox_id: sandboxId })).status?.network?.ip ?? '';
    assert.ok(podIp, 'the sandbox has an IP');
  });

  /** Create and start a container in the sandbox; resolves with its id and the time StartContainer was called. */
  async function start(name: string, extra: Partial<ContainerConfig>): Promise<{ id: string; startedAt: number }> {
    const config: ContainerConfig = {
      metadata: { name, attempt: 0 },
      image: { image: ref },
      labels: { 'io.kubernetes.container.name': name },
      log_path: `${name}/0.log`,
      ...extra,
    };
    const { container_id: id } = await client.createContainer({
      pod_sandbox_id: sandboxId,
      config,
      sandbox_config: sandboxConfig,
    });
    const startedAt = Date.now();
    await client.startContainer({ container_id: id });
    return { id, startedAt };
  }

  async function runToExit(name: string, extra: Partial<ContainerConfig>): Promise<{ out: string; ms: number }> {
    const { id, startedAt } = await start(name, extra);
    const status = await waitFor(
      async () => {
        const { status: s } = await client.containerStatus({ container_id: id });
        return s?.state === 'CONTAINER_EXITED' && s;
      },
      { timeoutMs: 60_000, intervalMs: 20, message: `${name} to exit` },
    );
    const ms = Date.now() - startedAt;
    const out = await logText(join(logDir, name, '0.log'));
    assert.equal(status.exit_code, 0, `${name} exit code; output:\n${out}`);
    await client.removeContainer({ container_id: id });
    return { out, ms };
  }

  it('runs kruise-daemon --help from the entry point, as the non-root image user, with production env', async function () {
    const help = await runToExit('daemon-help', { args: ['--help'] });
    figures.daemonHelpMs = help.ms;
    assert.match(help.out, /^Usage: kruise-daemon/m);
    const who = await runToExit('whoami', {
      command: ['node'],
      args: ['-e', 'console.log(process.getuid(), process.getgid(), process.env.NODE_ENV, process.version)'],
    });
    assert.match(who.out, /^65532 65532 production v24\./m);
  });

  it("runs kruise-controller --help as the Deployment's command", async function () {
    const help = await runToExit('controller-help', { command: ['kruise-controller'], args: ['--help'] });
    figures.controllerHelpMs = help.ms;
    assert.match(help.out, /^Usage: kruise-controller/m);
  });

  it('runs the agent as the DaemonSet does (root, read-only root fs): /healthz answers and the runtime is ok', async function () {
    const kubeconfig = join(hostDir, 'kubeconfig');
    // no API server here: the agent's informers wait (and /healthz says so); the runtime check does not need one
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]',
        'users: [{name: none, user: {token: none}}]',
        'contexts: [{name: none, context: {cluster: none, user: none}}]',
        'current-context: none',
        '',
      ].join('\n'),
    );
    const { id, startedAt } = await start('agent', {
      args: ['--addr=:10221', '--host-run-dir=/hostvarrun', '--kubeconfig=/etc/kruise/kubeconfig'],
      envs: [
        { key: 'NODE_NAME', value: 'image-test-node' },
        { key: 'NODE_OPTIONS', value: '--max-semi-space-size=1 --max-old-space-size=64' },
      ],
      mounts: [
        { container_path: '/hostvarrun/containerd/containerd.sock', host_path: env.runtimeSocket },
        { container_path: '/etc/kruise/kubeconfig', host_path: kubeconfig, readonly: true },
      ],
      linux: { security_context: { run_as_user: { value: 0 }, readonly_rootfs: true } },
    });
    const url = `http://${podIp}:10221/healthz?verbose`;
    await waitFor(
      async () => {
        const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
        await response.body?.cancel();
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 20, message: `${url} to answer` },
    );
    figures.agentHealthzAnswersMs = Date.now() - startedAt;
    const body = await waitFor(
      async () => {
        const text = await (await fetch(url, { signal: AbortSignal.timeout(1_000) })).text();
        return text.includes('[+]runtime ok') && text;
      },
      { timeoutMs: 30_000, intervalMs: 50, message: 'the agent to reach the runtime through the mounted socket' },
    );
    figures.agentRuntimeOkMs = Date.now() - startedAt;
    assert.match(body, /\[-\]nodeImageInformerSynced failed/, 'no API server: the informers are reported as waiting');
    await client.stopContainer({ container_id: id, timeout: 10 });
    const { status } = await client.containerStatus({ container_id: id });
    assert.equal(status?.exit_code, 0, 'SIGTERM stops the agent cleanly');
    await client.removeContainer({ container_id: id });
  });
});
