import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { status } from '@grpc/grpc-js';
import { CRI_USAGE, parseCriCommandLine, parseDuration, runCriCommand } from '../../../src/daemon/cri-command.js';
import { CRI_BASICS, startFakeRuntime, tempDir, type FakeRuntime } from './fake-runtime.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCriCommand(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env,
    stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
    now: () => Date.parse('2025-01-01T12:00:00Z'),
  });
  return { code, stdout, stderr };
}

const IMAGE_ID = 'sha256:1c61879f30484e66203a01421638c1ede80d97115690f95f65518e41b9c8471d';

describe('kruise-daemon cri (command line)', () => {
  describe('arguments', () => {
    it('prints help with exit 0', async () => {
      for (const argv of [['--help'], ['-h'], ['help'], ['images', '--help']]) {
        const r = await run(argv);
        assert.equal(r.code, 0);
        assert.equal(r.stdout, CRI_USAGE);
        assert.equal(r.stderr, '');
      }
    });

    it('rejects bad usage with exit 2 and a message naming the problem', async () => {
      const cases: [string[], RegExp][] = [
        [[], /no command given/],
        [['start'], /unknown command "start"/],
        [['info', '--bogus'], /Unknown option '--bogus'/],
        [['info', 'extra'], /info takes no arguments, got extra/],
        [['pull'], /pull takes exactly one IMAGE/],
        [['pull', 'a', 'b'], /pull takes exactly one IMAGE/],
        [['pull', 'Not/Valid'], /invalid image reference "Not\/Valid"/],
        [['pull', 'busybox', '--password', 'p'], /a password needs --username/],
        [['pull', 'busybox', '--username', 'u'], /--username needs --password-stdin/],
        [['pull', 'busybox', '--username', 'u', '--password', 'p', '--password-stdin'], /not both/],
        [['images', '--username', 'u'], /for pull only/],
        [['info', '--timeout', 'soon'], /--timeout "soon" is not a positive duration/],
        [['info', '--timeout', '0s'], /not a positive duration/],
        [['info', '--runtime-socket', ' '], /--runtime-socket is empty/],
        [['info', '--runtime-socket'], /argument missing/],
      ];
      for (const [argv, message] of cases) {
        const r = await run(argv);
        assert.equal(r.code, 2, argv.join(' '));
        assert.match(r.stderr, message, argv.join(' '));
        assert.match(r.stderr, /kruise-daemon cri --help/);
        assert.equal(r.stdout, '');
      }
    });

    it('reads an empty --password-stdin as a usage error', async () => {
      const r = await run(['pull', 'busybox', '--username', 'u', '--password-stdin'], {}, '');
      assert.equal(r.code, 2);
      assert.match(r.stderr, /standard input is empty/);
    });

    it('parses durations and options anywhere on the line', () => {
      assert.equal(parseDuration('500ms'), 500);
      assert.equal(parseDuration('10s'), 10_000);
      assert.equal(parseDuration('2m'), 120_000);
      assert.equal(parseDuration('1.5'), 1500);
      assert.deepEqual(parseCriCommandLine(['--json', 'ps', '--runtime-socket', '/x.sock', '--timeout', '3s']), {
        command: 'ps',
        json: true,
        passwordStdin: false,
        socket: '/x.sock',
        timeoutMs: 3000,
      });
    });
  });

  describe('against a fake runtime', () => {
    let tmp: { dir: string; remove(): Promise<void> };
    let rt: FakeRuntime;
    let env: Record<string, string>;

    before(async () => {
      tmp = await tempDir();
      rt = await startFakeRuntime(join(tmp.dir, 'containerd.sock'), {
        runtime: {
          ...CRI_BASICS.runtime,
          Status: (_call, cb) =>
            cb(null, { status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] } }),
          ListPodSandbox: (_call, cb) =>
            cb(null, {
              items: [
                {
                  id: 'a1b2c3d4e5f6a7b8',
                  metadata: { name: 'web-0', namespace: 'default', uid: 'u1', attempt: 0 },
                  state: 'SANDBOX_READY',
                  created_at: (BigInt(Date.parse('2025-01-01T11:59:00Z')) * 1_000_000n).toString(),
                },
              ],
            }),
          ListContainers: (_call, cb) =>
            cb(null, {
              containers: [
                {
                  id: 'c0c1c2c3c4c5c6c7',
                  pod_sandbox_id: 'a1b2c3d4e5f6a7b8',
                  metadata: { name: 'app', attempt: 2 },
                  image: { image: IMAGE_ID },
                  image_ref: IMAGE_ID,
                  state: 'CONTAINER_RUNNING',
                  created_at: (BigInt(Date.parse('2025-01-01T11:59:50Z')) * 1_000_000n).toString(),
                },
              ],
            }),
        },
        image: {
          ListImages: (_call, cb) =>
            cb(null, { images: [{ id: IMAGE_ID, repo_tags: ['127.0.0.1:5000/test/busybox:1.0'], size: 1048576 }] }),
          PullImage: (call, cb) =>
            call.request.auth?.password === 'right'
              ? cb(null, { image_ref: IMAGE_ID })
              : cb({
                  code: status.UNKNOWN,
                  details: 'pulling from host 127.0.0.1:5001 failed with status code [manifests 1.0]: 401 Unauthorized',
                }),
        },
      });
      env = { RUNTIME_SOCKET: rt.socket };
    });
    after(async () => {
      await rt.stop();
      await tmp.remove();
    });

    it('info: table and JSON', async () => {
      const table = await run(['info'], env);
      assert.equal(table.code, 0, table.stderr);
      assert.match(table.stdout, /^Socket {12}.*containerd\.sock\nRuntime {11}fake-cri\n/);
      assert.match(table.stdout, /RuntimeReady {6}true\n$/);
      const json = await run(['info', '--json'], env);
      assert.deepEqual(JSON.parse(json.stdout), {
        socket: rt.socket,
        runtimeName: 'fake-cri',
        runtimeVersion: '0.0.1',
        runtimeApiVersion: 'v1',
        conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }],
      });
    });

    it('finds the runtime under --host-run-dir when no socket is given', async () => {
      const r = await run(['info', '--json', '--host-run-dir', tmp.dir], {});
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).socket, rt.socket);
    });

    it('images: table and JSON', async () => {
      const table = await run(['images'], env);
      assert.equal(
        table.stdout,
        'IMAGE                         TAG   IMAGE ID        SIZE\n' +
          '127.0.0.1:5000/test/busybox   1.0   1c61879f30484   1.0 MiB\n',
      );
      const json = await run(['images', '--json'], env);
      assert.deepEqual(JSON.parse(json.stdout), [
        { id: IMAGE_ID, repoTags: ['127.0.0.1:5000/test/busybox:1.0'], repoDigests: [], size: 1048576, pinned: false },
      ]);
    });

    it('ps: sandboxes and containers, the container image shown by tag', async () => {
      const table = await run(['ps'], env);
      assert.equal(table.code, 0, table.stderr);
      assert.match(
        table.stdout,
        /^POD ID {10}POD {13}STATE {3}CREATED {3}ATTEMPT\na1b2c3d4e5f6a {3}default\/web-0 {3}Ready {3}1m ago/,
      );
      assert.match(
        table.stdout,
        /c0c1c2c3c4c5c {3}app {4}Running {3}a1b2c3d4e5f6a {3}default\/web-0 {3}127\.0\.0\.1:5000\/test\/busybox:1\.0 {3}10s ago {3}2\n$/,
      );
      const json = JSON.parse((await run(['ps', '--json'], env)).stdout);
      assert.equal(json.sandboxes[0].state, 'SANDBOX_READY');
      assert.equal(json.containers[0].state, 'CONTAINER_RUNNING');
      assert.equal(json.containers[0].image, '127.0.0.1:5000/test/busybox:1.0');
      assert.equal(json.containers[0].imageRef, IMAGE_ID);
    });

    it('pull with --password-stdin sends the credentials and never prints them', async () => {
      const ok = await run(
        ['pull', '127.0.0.1:5001/test/busybox:1.0', '--username', 'user', '--password-stdin', '--json'],
        env,
        'right\n',
      );
      assert.equal(ok.code, 0, ok.stderr);
      const doc = JSON.parse(ok.stdout);
      assert.equal(doc.image, '127.0.0.1:5001/test/busybox:1.0');
      assert.equal(doc.imageRef, IMAGE_ID);
      const sent = rt.requests.filter((r) => r.method === 'PullImage').at(-1)?.request as {
        auth: { username: string; password: string };
      };
      assert.equal(sent.auth.username, 'user');
      assert.equal(sent.auth.password, 'right');

      const bad = await run(
        ['pull', '127.0.0.1:5001/test/busybox:1.0', '--username', 'user', '--password', 'wrong-pw'],
        env,
      );
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /registry 127\.0\.0\.1:5001 rejected the given credentials/);
      assert.match(bad.stderr, /401 Unauthorized/);
      for (const text of [ok.stdout, ok.stderr, bad.stdout, bad.stderr]) {
        assert.doesNotMatch(text, /right|wrong-pw/);
      }
    });

    it('exits 1 naming every path tried when no runtime answers', async () => {
      const empty = await tempDir();
      try {
        const r = await run(['images', '--host-run-dir', empty.dir, '--timeout', '300ms'], {});
        assert.equal(r.code, 1);
        assert.match(r.stderr, new RegExp(`no CRI runtime answered under ${empty.dir}; tried:`));
        assert.equal(r.stderr.match(/: missing/g)?.length, 6);
        assert.equal(r.stdout, '');
      } finally {
        await empty.remove();
      }
    });
  });
});
