import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import {
  parseDaemonCommandLine,
  parseListenAddress,
  readableFileProblem,
  type FileCheck,
} from '../../../src/daemon/options.js';
import { ConfigError } from '../../../src/util/config-error.js';

const env = { NODE_NAME: 'node-1' };
const allReadable: FileCheck = () => undefined;

function options(argv: string[], extraEnv: NodeJS.ProcessEnv = {}, check: FileCheck = allReadable) {
  const parsed = parseDaemonCommandLine(argv, { ...env, ...extraEnv }, check);
  assert.equal(parsed.kind, 'run');
  return parsed.options;
}

function configError(argv: string[], envValue: NodeJS.ProcessEnv, check: FileCheck = allReadable): string {
  try {
    parseDaemonCommandLine(argv, envValue, check);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.ok(!err.message.includes('\n'), 'the message is one line');
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

describe('daemon options', () => {
  it('has the documented defaults', () => {
    const o = options([]);
    assert.deepEqual(o, {
      nodeName: 'node-1',
      runtimeSocket: undefined,
      hostRunDir: '/hostvarrun',
      kubeconfig: undefined,
      listen: { host: undefined, port: 10221 },
      logLevel: 'info',
      maxParallelPulls: 2,
      imageGcHighThresholdPercent: 85,
      imageGcLowThresholdPercent: 80,
      imageFsRoot: '/',
      podProbe: true,
      maxConcurrentProbes: 16,
      probeStatusWindowMs: 1000,
    });
  });

  it("takes kubelet's image GC thresholds (low never above high) and where the host's root is seen", () => {
    const o = options(['--image-gc-high-threshold-percent=90', '--image-gc-low-threshold-percent', '70']);
    assert.equal(o.imageGcHighThresholdPercent, 90);
    assert.equal(o.imageGcLowThresholdPercent, 70);
    assert.equal(options(['--image-gc-high-threshold-percent=50']).imageGcLowThresholdPercent, 50);
    assert.equal(options(['--image-fs-root', '/host']).imageFsRoot, '/host');
    assert.match(
      configError(['--image-gc-high-threshold-percent=70', '--image-gc-low-threshold-percent=75'], env),
      /--image-gc-low-threshold-percent=75 must not be above --image-gc-high-threshold-percent=70/,
    );
    assert.match(
      configError(['--image-gc-high-threshold-percent=101'], env),
      /--image-gc-high-threshold-percent="101" must be a whole number from 1 to 100/,
    );
  });

  it('switches the custom probes and bounds their concurrency and status window', () => {
    assert.equal(options(['--pod-probe=false']).podProbe, false);
    assert.equal(options(['--pod-probe', 'TRUE']).podProbe, true);
    assert.equal(options(['--max-concurrent-probes', '1']).maxConcurrentProbes, 1);
    assert.equal(options(['--max-concurrent-probes=256']).maxConcurrentProbes, 256);
    assert.equal(options(['--probe-status-window-ms=250']).probeStatusWindowMs, 250);
    assert.match(configError(['--pod-probe=off'], env), /--pod-probe="off" must be true or false/);
    for (const bad of ['0', '257', '-1', '1.5', 'x', '']) {
      assert.match(
        configError([`--max-concurrent-probes=${bad}`], env),
        /--max-concurrent-probes=.* 1 to 256 \(probe runs/,
      );
    }
    for (const bad of ['99', '60001', 'x']) {
      assert.match(
        configError([`--probe-status-window-ms=${bad}`], env),
        /--probe-status-window-ms=.* from 100 to 60000/,
      );
    }
  });

  it('takes flags in both --flag=value and --flag value forms', () => {
    const o = options([
      '--runtime-socket=/run/c.sock',
      '--host-run-dir',
      '/x',
      '--addr',
      '127.0.0.1:0',
      '--kubeconfig=/k',
    ]);
    assert.equal(o.runtimeSocket, '/run/c.sock');
    assert.equal(o.hostRunDir, '/x');
    assert.deepEqual(o.listen, { host: '127.0.0.1', port: 0 });
    assert.equal(o.kubeconfig, '/k');
  });

  it('prefers a flag over its environment variable and reads the variables otherwise', () => {
    assert.equal(options([], { RUNTIME_SOCKET: '/env.sock' }).runtimeSocket, '/env.sock');
    assert.equal(
      options(['--runtime-socket', '/flag.sock'], { RUNTIME_SOCKET: '/env.sock' }).runtimeSocket,
      '/flag.sock',
    );
    assert.equal(options([], { KUBECONFIG: '/env/kubeconfig' }).kubeconfig, '/env/kubeconfig');
    assert.equal(options(['--kubeconfig', '/flag'], { KUBECONFIG: '/env' }).kubeconfig, '/flag');
    assert.equal(options([], { LOG_LEVEL: 'DEBUG' }).logLevel, 'debug');
  });

  it('treats empty environment variables as unset', () => {
    const o = options([], { RUNTIME_SOCKET: '', KUBECONFIG: '' });
    assert.equal(o.runtimeSocket, undefined);
    assert.equal(o.kubeconfig, undefined);
  });

  it('answers --help and -h without needing NODE_NAME', () => {
    assert.deepEqual(parseDaemonCommandLine(['--help'], {}), { kind: 'help' });
    assert.deepEqual(parseDaemonCommandLine(['-h'], {}), { kind: 'help' });
  });

  it('requires NODE_NAME and checks it is a node name', () => {
    assert.match(configError([], {}), /NODE_NAME is not set/);
    assert.match(configError([], { NODE_NAME: '  ' }), /NODE_NAME is not set/);
    assert.match(configError([], { NODE_NAME: 'Bad_Name' }), /NODE_NAME="Bad_Name" is not a valid node name/);
  });

  it('rejects unknown flags, stray arguments, missing values and empty values', () => {
    assert.match(configError(['--nope'], env), /--nope.*see kruise-daemon --help/);
    assert.match(configError(['stray'], env), /stray/);
    assert.match(configError(['--addr'], env), /--addr/);
    assert.match(configError(['--runtime-socket='], env), /--runtime-socket is empty/);
  });

  it('rejects a bad LOG_LEVEL naming the allowed ones', () => {
    assert.match(configError([], { ...env, LOG_LEVEL: 'loud' }), /LOG_LEVEL=loud is not one of .*info/);
  });

  it('reports an unreadable kubeconfig with the reason from the file check', () => {
    const missing: FileCheck = () => 'does not exist';
    assert.equal(
      configError(['--kubeconfig', '/no/such'], env, missing),
      '--kubeconfig=/no/such: the kubeconfig file does not exist',
    );
    assert.match(
      configError([], { ...env, KUBECONFIG: '/no/such' }, missing),
      /^KUBECONFIG=\/no\/such: .*does not exist/,
    );
    assert.match(configError([], { ...env, KUBECONFIG: '/a:/b' }), /KUBECONFIG names 2 files.*--kubeconfig/);
  });

  it('checks kubeconfig files on disk by default', () => {
    assert.match(configError(['--kubeconfig', '/definitely/not/here'], env, readableFileProblem), /does not exist/);
    assert.match(configError(['--kubeconfig', '/tmp'], env, readableFileProblem), /is not a regular file/);
    assert.equal(readableFileProblem(fileURLToPath(import.meta.url)), undefined);
  });
});

describe('parseListenAddress', () => {
  const good: Array<[string, { host: string | undefined; port: number }]> = [
    [':10221', { host: undefined, port: 10221 }],
    ['0.0.0.0:80', { host: '0.0.0.0', port: 80 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['localhost:65535', { host: 'localhost', port: 65535 }],
  ];
  for (const [text, expected] of good) {
    it(`accepts ${text}`, () => assert.deepEqual(parseListenAddress(text), expected));
  }

  for (const text of ['10221', ':', ':port', ':65536', 'host:123456', '::1:80', 'a b:80', 'host:-1', '']) {
    it(`rejects ${JSON.stringify(text)} with a ConfigError naming the flag`, () => {
      assert.throws(
        () => parseListenAddress(text, '--addr'),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith(`--addr=${JSON.stringify(text)}`),
      );
    });
  }
});
