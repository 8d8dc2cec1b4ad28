// The kruise-daemon image as the cluster script builds it (test/cluster/image, umoci, no Docker engine): its config and
// layers, then run through containerd's CRI like kubelet runs it: `kruise-daemon --help` (the entry point) and
// `kruise-controller --help` (the Deployment's command) as the image's user, and the agent itself, root as the
// DaemonSet runs it, until /healthz answers and says the runtime (the mounted CRI socket) is ok. Prints the sizes and
// the cold-start times (pull, first --help output, /healthz answering) on stderr.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { pluginModules } from '../../../src/daemon/ipreservation/install.js';
import { ensureImage, imageSizes, type BuiltImage, type ImageSizes } from '../../cluster/image/build.js';
import { pushImage } from '../../cluster/image/component.js';
import { APP_DIR, IMAGE_COMMANDS, IMAGE_CONFIG } from '../../cluster/image/spec.js';
import { runChecked } from '../../cluster/runtime/exec.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { ImagePod, waitForAnswer, waitForBody } from '../../support/image-run.js';

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

describe('the kruise-daemon image (umoci, no Docker engine) run through containerd', function () {
  this.timeout(300_000);
  let env: ClusterEnv;
  let image: BuiltImage;
  let ref = '';
  let client: CriClient;
  let sizes: ImageSizes;
  const figures: Record<string, number> = {};
  let pod: ImagePod | undefined;
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
  });

  after(async function () {
    await pod?.close();
    if (client) {
      if (ref) await client.removeImage({ image: { image: ref } }).catch(() => undefined);
      client.close();
    }
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
    const baseFiles = ['lib64/ld-linux-x86-64.so.2', 'usr/bin/env', 'etc/passwd', 'etc/ld.so.cache', 'etc/os-release'];
    for (const pkg of ['libc6', 'libstdc++6', 'libgcc-s1', 'coreutils']) baseFiles.push(`var/lib/dpkg/status.d/${pkg}`);
    for (const file of baseFiles) {
      if (process.arch === 'x64' || file !== 'lib64/ld-linux-x86-64.so.2') assert.ok(base.includes(file), file);
    }
    assert.ok(!base.some((f) => f.startsWith('usr/share/man/') || f.includes('/gconv/')), 'docs and gconv pruned');
    const everything = layerFiles.flat();
    for (const absent of ['bin/sh', 'usr/bin/sh', 'bin/bash', 'usr/local/bin/npm', 'usr/bin/apt-get', 'usr/bin/dpkg'])
      assert.ok(!everything.includes(absent), `no ${absent}`);
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
    pod = await ImagePod.open(client, env, ref, 'kruise');
    assert.ok(pod.ip, 'the sandbox has an IP');
  });

  async function runToExit(
    name: string,
    extra: Parameters<ImagePod['runToExit']>[1],
  ): Promise<{ out: string; ms: number }> {
    assert.ok(pod, 'the pod of the previous test');
    const result = await pod.runToExit(name, extra);
    assert.equal(result.exitCode, 0, `${name} exit code; output:\n${result.out}`);
    return result;
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
    assert.ok(pod, 'the pod of the previous test');
    const agent = await pod.startAgent();
    figures.agentHealthzAnswersMs = await waitForAnswer(agent.healthz, agent.startedAt);
    const body = await waitForBody(agent.healthz, '[+]runtime ok');
    figures.agentRuntimeOkMs = Date.now() - agent.startedAt;
    assert.match(body, /\[-\]nodeImageInformerSynced failed/, 'no API server: the informers are reported as waiting');
    assert.equal(await pod.stop(agent.id), 0, 'SIGTERM stops the agent cleanly');
  });
});
