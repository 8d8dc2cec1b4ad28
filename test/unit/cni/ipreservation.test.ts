// The agent's IP-reservation controller on a FakeClock, against a real store written by the plugin's code.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { DEFAULT_DATA_DIR, RESERVED_IP_DURATION_ANNOTATION } from '../../../src/cni/config.js';
import { runPlugin } from '../../../src/cni/plugin.js';
import type { PodIdentity } from '../../../src/cni/state.js';
import { readState, storePaths } from '../../../src/cni/store.js';
import {
  IpReservationController,
  REASON_INVALID_DURATION,
  REASON_IP_REUSED,
} from '../../../src/daemon/ipreservation/controller.js';
import { conflist, installConflist, installPlugin, wrapperScript } from '../../../src/daemon/ipreservation/install.js';
import { runIpamCommand } from '../../../src/daemon/ipreservation/ls-command.js';
import { ipamMetrics } from '../../../src/daemon/ipreservation/metrics.js';
import { IpamFlagError, parseIpamFlags } from '../../../src/daemon/ipreservation/options.js';
import { parseDaemonCommandLine } from '../../../src/daemon/options.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry, type Registry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';

const MINUTE = 60_000;

describe('ipreservation controller (fake clock, real store)', () => {
  let dataDir: string;
  let clock: FakeClock;
  let registry: Registry;
  let events: Array<{ pod: PodIdentity; type: string; reason: string; message: string }>;
  let sandboxes: string[];
  let controller: IpReservationController;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'kruise-ipam-agent-'));
    clock = new FakeClock(1_700_000_000_000);
    registry = createRegistry();
    events = [];
    sandboxes = [];
    controller = new IpReservationController({
      dataDir,
      clock,
      logger: silentLogger,
      metrics: ipamMetrics(registry),
      runtime: () =>
        Promise.resolve({ listPodSandbox: () => Promise.resolve({ items: sandboxes.map((id) => ({ id })) }) }),
      events: { event: (pod, type, reason, message) => events.push({ pod, type, reason, message }) },
      gcIntervalMs: 60_000,
      gcGraceMs: 120_000,
      watch: false,
    });
  });
  afterEach(async () => {
    await controller.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function plugin(command: string, id: string, name: string, annotations?: Record<string, string>, uid = `uid-${id}`) {
    let out = '';
    const code = runPlugin({
      env: {
        CNI_COMMAND: command,
        CNI_CONTAINERID: id,
        CNI_IFNAME: 'eth0',
        CNI_NETNS: '/proc/1/ns/net',
        CNI_ARGS: `K8S_POD_NAMESPACE=ns;K8S_POD_NAME=${name};K8S_POD_UID=${uid}`,
      },
      stdin: JSON.stringify({
        cniVersion: '1.0.0',
        name: 'net',
        ipam: { type: 'kruise-ipam', ranges: [[{ subnet: '10.7.0.0/24' }]], dataDir },
        ...(annotations ? { runtimeConfig: { 'io.kubernetes.cri.pod-annotations': annotations } } : {}),
      }),
      now: () => clock.now(),
      stdout: (t) => (out += t),
      stderr: () => undefined,
    });
    assert.equal(code, 0, out);
    return out;
  }

  async function metric(name: string): Promise<number> {
    const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
    return (m?.values as Array<{ value: number }> | undefined)?.reduce((a, v) => a + v.value, 0) ?? 0;
  }

  it('expires a reservation on time with its own timer (no ADD needed) and counts it', async () => {
    controller.start();
    plugin('ADD', 's1', 'web-0', { [RESERVED_IP_DURATION_ANNOTATION]: '2' });
    plugin('DEL', 's1', 'web-0');
    assert.deepEqual(await controller.sync(), [{ network: 'net', held: 0, reserved: 1 }]);
    assert.equal(await metric('kruise_daemon_ipam_reserved_ips'), 1);
    await clock.advance(2 * MINUTE - 1);
    await controller.sync();
    assert.equal(Object.keys(readState(storePaths(dataDir, 'net')).entries).length, 1, 'not before its time');
    await clock.advance(1);
    await controller.sync();
    assert.deepEqual(readState(storePaths(dataDir, 'net')).entries, {});
    assert.equal(await metric('kruise_daemon_ipam_reservations_expired_total'), 1);
    assert.equal(await metric('kruise_daemon_ipam_reserved_ips'), 0);
    assert.deepEqual(readState(storePaths(dataDir, 'net')).notes, [], 'notes are drained');
  });

  it('re-arms its timer hourly for a long reservation and still frees it on time', async () => {
    controller.start();
    plugin('ADD', 's1', 'long-0', { [RESERVED_IP_DURATION_ANNOTATION]: '150' });
    plugin('DEL', 's1', 'long-0');
    await controller.sync();
    assert.equal(clock.pendingTimers(), 2, 'the expiry timer and the GC timer');
    await clock.advance(3_600_000);
    await controller.sync();
    assert.equal(await metric('kruise_daemon_ipam_reserved_ips'), 1);
    await clock.advance(150 * MINUTE - 3_600_000 - 1);
    await controller.sync();
    assert.equal(await metric('kruise_daemon_ipam_reserved_ips'), 1, 'not a millisecond early');
    await clock.advance(1);
    await controller.sync();
    assert.equal(await metric('kruise_daemon_ipam_reserved_ips'), 0);
  });

  it('sends IPReused on the pod that got its IP back and a Warning for a malformed duration', async () => {
    plugin('ADD', 's1', 'db-0', { [RESERVED_IP_DURATION_ANNOTATION]: '5' });
    plugin('DEL', 's1', 'db-0');
    plugin('ADD', 's2', 'db-0', { [RESERVED_IP_DURATION_ANNOTATION]: '5' }, 'new-uid');
    plugin('ADD', 's3', 'bad-0', { [RESERVED_IP_DURATION_ANNOTATION]: '5m' });
    await controller.sync();
    assert.deepEqual(
      events.map((e) => [e.pod.name, e.pod.uid, e.type, e.reason]),
      [
        ['db-0', 'new-uid', 'Normal', REASON_IP_REUSED],
        ['bad-0', 'uid-s3', 'Warning', REASON_INVALID_DURATION],
      ],
    );
    assert.match(events[0]!.message, /reserved IP 10\.7\.0\.2 back/);
    assert.equal(await metric('kruise_daemon_ipam_reservations_reused_total'), 1);
    assert.equal(await metric('kruise_daemon_ipam_invalid_durations_total'), 1);
    await controller.sync();
    assert.equal(events.length, 2, 'each note is reported once');
  });

  it('GC releases sandboxes the runtime lost, keeps reservations asked for, and spares young allocations', async () => {
    plugin('ADD', 'live', 'a');
    plugin('ADD', 'lost', 'b');
    plugin('ADD', 'lost-reserved', 'c', { [RESERVED_IP_DURATION_ANNOTATION]: '1' });
    await clock.advance(121_000);
    plugin('ADD', 'in-flight', 'd'); // its RunPodSandbox has not returned yet: not listed
    sandboxes = ['live'];
    assert.equal(await controller.collectGarbage(), 2);
    const entries = readState(storePaths(dataDir, 'net')).entries;
    const byState = Object.values(entries).map((e) =>
      e.kind === 'held' ? `held:${e.containerId}` : `reserved:${e.pod.name}`,
    );
    assert.deepEqual(byState.sort(), ['held:in-flight', 'held:live', 'reserved:c']);
    assert.equal(await metric('kruise_daemon_ipam_gc_released_total'), 2);
  });

  it('runs GC on its interval', async () => {
    controller.start();
    plugin('ADD', 'gone', 'a');
    await clock.advance(60_000);
    await controller.sync();
    assert.equal(Object.keys(readState(storePaths(dataDir, 'net')).entries).length, 1, 'within the grace period');
    await clock.advance(120_000);
    await controller.sync();
    assert.deepEqual(readState(storePaths(dataDir, 'net')).entries, {});
  });

  async function ipamCommand(argv: string[], env: NodeJS.ProcessEnv = {}) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (d: Buffer) => (out += String(d)));
    stderr.on('data', (d: Buffer) => (err += String(d)));
    const code = await runIpamCommand(argv, { stdin: new PassThrough(), stdout, stderr, env });
    return { code, out, err };
  }

  it('`ipam ls` lists held and reserved addresses as a table and as JSON', async () => {
    plugin('ADD', 'sandbox-one', 'web-0', { [RESERVED_IP_DURATION_ANNOTATION]: '3' });
    plugin('ADD', 'sandbox-two', 'web-1');
    plugin('DEL', 'sandbox-one', 'web-0');
    const run = (argv: string[]) => ipamCommand(argv);
    const table = await run(['ls', '--ipam-data-dir', dataDir]);
    assert.equal(table.code, 0);
    const lines = table.out.trim().split('\n');
    assert.match(lines[0]!, /^NETWORK\s+IP\s+STATE\s+POD\s+SANDBOX\s+SINCE\s+EXPIRES$/);
    assert.match(lines[1]!, /^net\s+10\.7\.0\.2\s+reserved\s+ns\/web-0\s+sandbox-one\s+\S+\s+\d{4}-/);
    assert.match(lines[2]!, /^net\s+10\.7\.0\.3\s+held\s+ns\/web-1\s+sandbox-two\s+\S+\s+-$/);
    const json = JSON.parse((await run(['ls', '--json', '--ipam-data-dir', dataDir])).out) as {
      entries: Array<{ ip: string; state: string; expires: string }>;
    };
    assert.deepEqual(
      json.entries.map((e) => [e.ip, e.state]),
      [
        ['10.7.0.2', 'reserved'],
        ['10.7.0.3', 'held'],
      ],
    );
    assert.equal(json.entries[0]!.expires, new Date(clock.now() + 3 * MINUTE).toISOString());
    assert.equal((await run(['nope'])).code, 2);
  });

  it('`ipam ls` reads the store the agent uses: its flag, its IPAM_DATA_DIR, its default', async () => {
    plugin('ADD', 'sandbox-one', 'web-0');
    const agentDataDir = (argv: string[], env: NodeJS.ProcessEnv) => {
      const parsed = parseDaemonCommandLine(['--ipam', ...argv], { NODE_NAME: 'n1', ...env });
      return parsed.kind === 'run' ? parsed.options.ipam?.dataDir : undefined;
    };
    const fromEnv = await ipamCommand(['ls', '--json'], { IPAM_DATA_DIR: dataDir });
    assert.equal(fromEnv.code, 0, fromEnv.err);
    assert.equal((JSON.parse(fromEnv.out) as { dataDir: string }).dataDir, dataDir);
    assert.equal(agentDataDir([], { IPAM_DATA_DIR: dataDir }), dataDir);
    assert.equal(agentDataDir(['--ipam-data-dir', '/elsewhere'], { IPAM_DATA_DIR: dataDir }), '/elsewhere');
    // the default: ls names the directory it read (whether or not this machine has it) and it is the agent's
    const byDefault = await ipamCommand(['ls', '--json']);
    const defaultDir = agentDataDir([], {})!;
    assert.equal(defaultDir, DEFAULT_DATA_DIR, "the agent's default is the plugin's");
    assert.ok(
      byDefault.code === 0
        ? (JSON.parse(byDefault.out) as { dataDir: string }).dataDir === defaultDir
        : byDefault.err.includes(` ${defaultDir} `),
      byDefault.out + byDefault.err,
    );
  });

  it('`ipam ls` says what is wrong: a store that is not there, a flag it does not know', async () => {
    const absent = await ipamCommand(['ls', '--ipam-data-dir', join(dataDir, 'absent')]);
    assert.equal(absent.code, 1);
    assert.match(absent.err, /no kruise-ipam store at \S+absent .*--ipam-data-dir.*IPAM_DATA_DIR/);
    const relative = await ipamCommand(['ls'], { IPAM_DATA_DIR: 'rel' });
    assert.equal(relative.code, 2);
    assert.match(relative.err, /IPAM_DATA_DIR="rel" must be an absolute path/);
    const unknown = await ipamCommand(['ls', '--data-dir', dataDir]);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.err,
      /^kruise-daemon ipam: unknown flag --data-dir \(its flags: --ipam-data-dir, --json, --help\)$/m,
    );
    assert.doesNotMatch(unknown.err, /positional argument/);
  });
});

describe('ipreservation install and flags', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kruise-ipam-install-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes an executable wrapper that execs this Node on the compiled plugin, once', () => {
    const first = installPlugin(dir, '/opt/node 24/bin/node', "/x/it's/kruise-ipam.js");
    assert.equal(first.changed, true);
    assert.equal(statSync(first.path).mode & 0o777, 0o755);
    assert.equal(readFileSync(first.path, 'utf8'), wrapperScript('/opt/node 24/bin/node', "/x/it's/kruise-ipam.js"));
    assert.match(
      readFileSync(first.path, 'utf8'),
      /^exec '\/opt\/node 24\/bin\/node' '\/x\/it'\\''s\/kruise-ipam\.js' "\$@"$/m,
    );
    assert.equal(installPlugin(dir, '/opt/node 24/bin/node', "/x/it's/kruise-ipam.js").changed, false);
  });

  it('writes a bridge conflist with kruise-ipam and the pod-annotations capability', () => {
    const spec = { networkName: 'k', bridge: 'cni0', subnets: ['10.1.0.0/16', 'fd00::/64'], dataDir: '/d' };
    const r = installConflist(dir, spec);
    const doc = JSON.parse(readFileSync(r.path, 'utf8')) as { plugins: Array<Record<string, unknown>> };
    assert.deepEqual(doc.plugins[0]!.capabilities, { 'io.kubernetes.cri.pod-annotations': true });
    assert.deepEqual(doc.plugins[0]!.ipam, {
      type: 'kruise-ipam',
      ranges: [[{ subnet: '10.1.0.0/16' }], [{ subnet: 'fd00::/64' }]],
      dataDir: '/d',
    });
    assert.equal(conflist(spec), readFileSync(r.path, 'utf8'));
  });

  it('parses the flags: off by default, install implies the controller, bad values are clear errors', () => {
    assert.equal(parseIpamFlags({}), undefined);
    const o = parseIpamFlags({ 'ipam-install': true, 'ipam-subnet': '10.1.0.0/16, fd00::/64' })!;
    assert.deepEqual(
      [o.install, o.subnets, o.cniBinDir, o.dataDir],
      [true, ['10.1.0.0/16', 'fd00::/64'], '/opt/cni/bin', '/var/lib/cni/kruise-ipam'],
    );
    const error = (v: Parameters<typeof parseIpamFlags>[0]) =>
      assert.throws(
        () => parseIpamFlags(v),
        (e: unknown) => e instanceof IpamFlagError,
      );
    error({ 'cni-bin-dir': '/x' });
    error({ ipam: true, 'ipam-subnet': '10.0.0.0/8' });
    error({ ipam: true, 'ipam-data-dir': 'rel' });
    error({ 'ipam-install': true, 'ipam-subnet': 'nope' });
    error({ ipam: true, 'ipam-bridge': 'a-very-long-bridge-name' });
    error({ 'ipam-install': true, 'ipam-install-mode': 'symlink' });
    assert.equal(parseIpamFlags({ ipam: true })!.installMode, 'copy');
    assert.equal(parseIpamFlags({ 'ipam-install': true, 'ipam-install-mode': 'in-place' })!.installMode, 'in-place');
  });
});
