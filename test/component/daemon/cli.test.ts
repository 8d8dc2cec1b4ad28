// The binary's command line: help, configuration errors (exit 2), the command table. No runtime needed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { KRUISE_DAEMON_BIN, runToExit } from './agent-process.js';

const MODULE_TRACE = new URL('./module-trace.js', import.meta.url).href;

/** Modules the binary resolves for `args` (the agent's static imports load even for --help). */
function modulesLoaded(args: string[]): string[] {
  const r = spawnSync(process.execPath, ['--import', MODULE_TRACE, KRUISE_DAEMON_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('[module] '))
    .map((l) => l.slice('[module] '.length));
}

describe('kruise-daemon command line', function () {
  this.timeout(30_000);

  it('--help prints usage with the flags and the commands, exit 0', async () => {
    const r = await runToExit(['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Usage: kruise-daemon/);
    for (const flag of ['--runtime-socket', '--host-run-dir', '--kubeconfig', '--addr', 'NODE_NAME', 'LOG_LEVEL']) {
      assert.ok(r.stdout.includes(flag), `help mentions ${flag}`);
    }
    assert.match(r.stdout, /Commands:\n {2}cri /);
    assert.equal(r.stderr, '');
  });

  it('exits 2 with one line on stderr when NODE_NAME is missing', async () => {
    const r = await runToExit([]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      'kruise-daemon: NODE_NAME is not set: the agent must know its node (set it from spec.nodeName)\n',
    );
    assert.equal(r.stdout, '');
  });

  const badConfigurations: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['a bad --addr', ['--addr', 'nonsense'], {}, /^kruise-daemon: --addr="nonsense" is not HOST:PORT/],
    ['a port out of range', ['--addr=:70000'], {}, /port above 65535/],
    [
      'an unreadable kubeconfig',
      ['--kubeconfig', '/no/such/kubeconfig'],
      {},
      /--kubeconfig=\/no\/such\/kubeconfig: the kubeconfig file does not exist/,
    ],
    [
      'a KUBECONFIG that is missing',
      [],
      { KUBECONFIG: '/no/such/file' },
      /^kruise-daemon: KUBECONFIG=\/no\/such\/file: .*does not exist/,
    ],
    ['an unknown flag', ['--frobnicate'], {}, /--frobnicate.*see kruise-daemon --help/],
    ['a bad LOG_LEVEL', [], { LOG_LEVEL: 'chatty' }, /LOG_LEVEL=chatty is not one of/],
  ];
  for (const [what, args, env, message] of badConfigurations) {
    it(`exits 2 with a clear message for ${what}`, async () => {
      const r = await runToExit(args, { NODE_NAME: 'node-1', ...env });
      assert.equal(r.code, 2, `stdout: ${r.stdout} stderr: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, 'one line');
    });
  }

  it('exits 2 for an unknown command, naming the known ones', async () => {
    const r = await runToExit(['frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "frobnicate"; commands: cri/);
  });

  it('dispatches `cri --help` to the cri command', async () => {
    const r = await runToExit(['cri', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /cri/);
    assert.match(r.stdout, /images/);
  });

  it('the agent loads no client-node API code and no command-line tool code', () => {
    const modules = modulesLoaded(['--help']);
    assert.ok(
      modules.some((m) => m.endsWith('/src/daemon/main.js')),
      'the trace sees the agent',
    );
    assert.ok(
      modules.some((m) => m.endsWith('/src/cri/index.js')),
      'the agent loads the CRI client',
    );
    const clientNode = modules.filter(
      (m) => m.includes('/@kubernetes/client-node/') && !/\/dist\/(watch|config_types)\.js$/.test(m),
    );
    assert.deepEqual(clientNode, [], 'only client-node dist/watch.js and dist/config_types.js are allowed');
    // tool code: the commands (`cri`, `ipam`), the other binaries' entry points, the plugin and the controller
    const toolCode = modules.filter(
      (m) =>
        /\/src\/(daemon\/cri-command|daemon\/ipreservation\/ls-command)\.js$/.test(m) ||
        /\/src\/(kubectl-plugin|controller)\//.test(m) ||
        (m.includes('/src/cli/') && !/\/src\/cli\/(kruise-daemon|exit-with-status)\.js$/.test(m)),
    );
    assert.deepEqual(toolCode, [], 'no tool code');
  });
});
