// `kruise-daemon cri info|images|pull|ps` against the real containerd, as tables and as JSON.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { removeCgroupTree } from '../../cluster/runtime/cgroups.js';
import { runCriCommand } from '../../../src/daemon/cri-command.js';
import { connectRuntime, type CriClient } from '../../../src/cri/index.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { stackOf, stackVersions } from '../../cluster/stack.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('kruise-daemon cri (real containerd)', function () {
  let env: ClusterEnv;
  let vars: Record<string, string>;

  async function run(argv: string[], stdin?: string): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runCriCommand(argv, {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      env: vars,
      stdin: Readable.from(stdin === undefined ? [] : [stdin]),
    });
    return { code, stdout, stderr };
  }

  before(async function () {
    env = await useCluster();
    vars = { RUNTIME_SOCKET: env.runtimeSocket };
  });

  it('info', async function () {
    const table = await run(['info']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^Runtime +containerd$/m);
    assert.match(table.stdout, /^CRI API version +v1$/m);
    assert.match(table.stdout, /^RuntimeReady +true$/m);
    const json = await run(['info', '--json', '--runtime-socket', env.runtimeSocket], undefined);
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout);
    assert.equal(doc.socket, env.runtimeSocket);
    assert.equal(doc.runtimeName, 'containerd');
    // the stack's containerd: v2.x built here (its own version string), or Debian's 1.6 (1.6.20~ds1-...)
    const versions = stackVersions(stackOf(env.dir));
    if (versions.runtime === 'debian') assert.match(doc.runtimeVersion, /^1\.6\./);
    else assert.equal(doc.runtimeVersion, versions.runtime);
  });

  it('pull (open and auth registry) and images', async function () {
    const open = await run(['pull', env.images.busybox1]);
    assert.equal(open.code, 0, open.stderr);
    assert.match(
      open.stdout,
      new RegExp(`^Pulled ${env.images.busybox1.replace(/[.]/g, '\\.')} \\(sha256:[0-9a-f]{64}\\) in \\d+ ms\\n$`),
    );

    const auth = await run(
      ['pull', env.images.authBusybox1, '--username', env.authUser, '--password-stdin', '--json'],
      `${env.authPassword}\n`,
    );
    assert.equal(auth.code, 0, auth.stderr);
    assert.match(JSON.parse(auth.stdout).imageRef, /^sha256:/);

    const wrong = await run(
      ['pull', env.images.authBusybox1, '--username', env.authUser, '--password-stdin'],
      'nope\n',
    );
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      new RegExp(`registry ${env.authRegistry.replace(/[.]/g, '\\.')} rejected the given credentials`),
    );
    for (const r of [open, auth, wrong]) assert.ok(!`${r.stdout}${r.stderr}`.includes(env.authPassword));

    const table = await run(['images']);
    assert.equal(table.code, 0, table.stderr);
    const [name, tag] = [env.images.busybox1.replace(/:[^:]+$/, ''), '1.0'];
    assert.match(table.stdout, /^IMAGE +TAG +IMAGE ID +SIZE$/m);
    assert.match(
      table.stdout,
      new RegExp(`^${name.replace(/[.]/g, '\\.')} +${tag.replace('.', '\\.')} +[0-9a-f]{13} +[0-9.]+ (KiB|MiB)$`, 'm'),
    );
    const json = JSON.parse((await run(['images', '--json'])).stdout) as { repoTags: string[] }[];
    assert.ok(json.some((i) => i.repoTags.includes(env.images.authBusybox1)));
  });

  describe('ps', function () {
    let client: CriClient;
    const uid = randomUUID();
    let sandboxId = '';

    before(async function () {
      client = await connectRuntime({ socket: env.runtimeSocket, env: {} });
      const config = {
        metadata: { name: 'ps-test', namespace: 'cri-cli', uid, attempt: 0 },
        linux: { cgroup_parent: `${env.podCgroupParent}/pod${uid}` },
      };
      sandboxId = (await client.runPodSandbox({ config })).pod_sandbox_id;
      await client.pullImage({ image: { image: env.images.busybox1 } });
      const { container_id } = await client.createContainer({
        pod_sandbox_id: sandboxId,
        sandbox_config: config,
        config: {
          metadata: { name: 'sleeper', attempt: 1 },
          image: { image: env.images.busybox1 },
          command: ['sleep', '3600'],
        },
      });
      await client.startContainer({ container_id });
    });
    after(async function () {
      if (sandboxId) {
        await client.stopPodSandbox({ pod_sandbox_id: sandboxId }).catch(() => undefined);
        await client.removePodSandbox({ pod_sandbox_id: sandboxId }).catch(() => undefined);
      }
      client?.close();
      await removeCgroupTree(`${env.podCgroupParent}/pod${uid}`).catch(() => undefined);
    });

    it('shows the sandbox and its running container', async function () {
      const table = await run(['ps']);
      assert.equal(table.code, 0, table.stderr);
      const short = sandboxId.slice(0, 13);
      assert.match(table.stdout, new RegExp(`^${short} +cri-cli/ps-test +Ready +\\d+s ago +0$`, 'm'));
      assert.match(
        table.stdout,
        new RegExp(
          `^[0-9a-f]{13} +sleeper +Running +${short} +cri-cli/ps-test +${env.images.busybox1.replace(/[.]/g, '\\.')} +\\d+s ago +1$`,
          'm',
        ),
      );
      const json = JSON.parse((await run(['ps', '--json'])).stdout) as {
        sandboxes: { id: string; state: string }[];
        containers: { podSandboxId: string; name: string; state: string; image: string }[];
      };
      assert.equal(json.sandboxes.find((s) => s.id === sandboxId)?.state, 'SANDBOX_READY');
      const c = json.containers.find((x) => x.podSandboxId === sandboxId);
      assert.equal(c?.name, 'sleeper');
      assert.equal(c?.state, 'CONTAINER_RUNNING');
      assert.equal(c?.image, env.images.busybox1);
    });
  });
});
