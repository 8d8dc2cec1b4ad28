import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESERVED_IP_DURATION_ANNOTATION } from '../../../src/cni/config.js';
import { runPlugin } from '../../../src/cni/plugin.js';
import { readState, storePaths } from '../../../src/cni/store.js';

interface Call {
  code: number;
  out: unknown;
  err: string;
}

describe('cni plugin: commands, errors and the store on disk', () => {
  let dir: string;
  let now: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kruise-ipam-unit-'));
    now = 1_000_000;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function netconf(extra: Record<string, unknown> = {}, annotations?: Record<string, string>, version = '1.0.0') {
    return {
      cniVersion: version,
      name: 'unit',
      ipam: { type: 'kruise-ipam', ranges: [[{ subnet: '10.5.0.0/28' }]], dataDir: dir, testOnlyMinuteMs: 1000 },
      ...(annotations ? { runtimeConfig: { 'io.kubernetes.cri.pod-annotations': annotations } } : {}),
      ...extra,
    };
  }

  function call(command: string, env: Record<string, string>, conf: unknown): Call {
    let out = '';
    let err = '';
    const code = runPlugin({
      env: { CNI_COMMAND: command, CNI_IFNAME: 'eth0', CNI_NETNS: '/var/run/netns/x', ...env },
      stdin: typeof conf === 'string' ? conf : JSON.stringify(conf),
      now: () => now,
      stdout: (t) => (out += t),
      stderr: (t) => (err += t),
    });
    return { code, out: out === '' ? undefined : JSON.parse(out), err };
  }

  const pod = (id: string, name: string, uid = `u-${id}`) => ({
    CNI_CONTAINERID: id,
    CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=${name};K8S_POD_INFRA_CONTAINER_ID=${id};K8S_POD_UID=${uid}`,
  });
  const addressOf = (c: Call) => (c.out as { ips: Array<{ address: string }> }).ips[0]!.address;

  it('ADD prints a 1.0.0 result; DEL frees; a second DEL without netns succeeds', () => {
    const a = call('ADD', pod('c1', 'a'), netconf());
    assert.equal(a.code, 0);
    assert.deepEqual(a.out, {
      cniVersion: '1.0.0',
      ips: [{ address: '10.5.0.2/28', gateway: '10.5.0.1' }],
      routes: [],
      dns: {},
    });
    assert.equal(call('DEL', pod('c1', 'a'), netconf()).code, 0);
    assert.equal(call('DEL', { ...pod('c1', 'a'), CNI_NETNS: '' }, netconf()).code, 0);
    assert.deepEqual(readState(storePaths(dir, 'unit')).entries, {});
  });

  it('keeps the address for the pod name for the duration, then frees it', () => {
    const ann = { [RESERVED_IP_DURATION_ANNOTATION]: '1' };
    const first = addressOf(call('ADD', pod('s1', 'web-0'), netconf({}, ann)));
    // the first DEL (StopPodSandbox) carries no annotations: the duration recorded at ADD applies
    assert.equal(call('DEL', pod('s1', 'web-0'), netconf()).code, 0);
    assert.equal(call('DEL', { ...pod('s1', 'web-0'), CNI_NETNS: '' }, netconf({}, ann)).code, 0);
    assert.notEqual(addressOf(call('ADD', pod('m1', 'other'), netconf())), first);
    now += 500;
    assert.equal(addressOf(call('ADD', pod('s2', 'web-0', 'new-uid'), netconf({}, ann))), first);
    call('DEL', pod('s2', 'web-0'), netconf({}, ann));
    now += 1000; // testOnlyMinuteMs = 1000: the reservation is over
    const fresh = call('ADD', pod('s3', 'web-0'), netconf());
    assert.equal(fresh.code, 0);
    const state = readState(storePaths(dir, 'unit'));
    assert.ok(state.notes.some((n) => n.kind === 'expired' && n.ip === first.split('/')[0]));
  });

  it('reports a malformed duration on stderr and in the store, and reserves nothing', () => {
    const r = call('ADD', pod('c1', 'a'), netconf({}, { [RESERVED_IP_DURATION_ANNOTATION]: 'ten' }));
    assert.equal(r.code, 0);
    assert.match(r.err, /pod ns\/a: io\.kubernetes\.cri\/reserved-ip-duration="ten" is not a whole number/);
    call('DEL', pod('c1', 'a'), netconf());
    const state = readState(storePaths(dir, 'unit'));
    assert.deepEqual(state.entries, {});
    assert.deepEqual(
      state.notes.map((n) => [n.kind, n.detail]),
      [['invalid-duration', 'ten']],
    );
  });

  it('answers 0.3.1 and 0.4.0 configs in their form and VERSION with the list', () => {
    const r = call('ADD', pod('c1', 'a'), netconf({}, undefined, '0.3.1'));
    assert.deepEqual((r.out as { ips: unknown[] }).ips, [
      { version: '4', address: '10.5.0.2/28', gateway: '10.5.0.1' },
    ]);
    const v = call('VERSION', {}, { cniVersion: '0.4.0' });
    assert.deepEqual(v.out, { cniVersion: '0.4.0', supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
    assert.equal(call('VERSION', {}, '').code, 0);
  });

  it('errors in CNI form with the spec codes (4: environment, 7: network configuration)', () => {
    const cases: Array<[string, Record<string, string>, unknown, number, RegExp]> = [
      ['ADD', pod('c1', 'a'), '{', 6, /not JSON/],
      ['ADD', pod('c1', 'a'), { ...netconf(), cniVersion: '9.9.9' }, 1, /not supported/],
      ['ADD', pod('c1', 'a'), { ...netconf(), ipam: { dataDir: dir } }, 7, /ranges/],
      ['ADD', pod('c1', 'a'), { ...netconf(), name: 'n'.repeat(256) }, 7, /^name=.*at most 255/],
      ['NOPE', pod('c1', 'a'), netconf(), 4, /CNI_COMMAND/],
      ['ADD', { ...pod('c1', 'a'), CNI_NETNS: '' }, netconf(), 4, /CNI_NETNS is required/],
      ['ADD', { ...pod('c1', 'a'), CNI_CONTAINERID: '' }, netconf(), 4, /CNI_CONTAINERID is required/],
      ['ADD', { ...pod('c1', 'a'), CNI_IFNAME: 'a/b' }, netconf(), 4, /CNI_IFNAME/],
      ['ADD', { ...pod('c1', 'a'), CNI_ARGS: 'K8S_POD_NAME' }, netconf(), 4, /KEY=VALUE/],
      ['ADD', { ...pod('c1', 'a'), CNI_ARGS: 'K8S_POD_NAMESPACE=NS;K8S_POD_NAME=a' }, netconf(), 4, /namespace/],
      ['CHECK', pod('zz', 'a'), netconf(), 3, /holds no address/],
      ['GC', {}, netconf(), 7, /valid-attachments/],
    ];
    for (const [command, env, conf, code, msg] of cases) {
      const r = call(command, env, conf);
      assert.equal(r.code, 1, `${command} ${JSON.stringify(env)}`);
      const body = r.out as { code: number; msg: string; cniVersion: string };
      assert.equal(body.code, code, body.msg);
      assert.match(body.msg, msg);
      assert.equal(typeof body.cniVersion, 'string');
    }
  });

  it('a DEL with a malformed pod name in CNI_ARGS still frees (it never blocks sandbox removal)', () => {
    call('ADD', pod('c1', 'a'), netconf());
    const r = call('DEL', { ...pod('c1', 'a'), CNI_ARGS: 'K8S_POD_NAMESPACE=Bad_NS;K8S_POD_NAME=a' }, netconf());
    assert.equal(r.code, 0);
    assert.deepEqual(readState(storePaths(dir, 'unit')).entries, {});
  });

  it('fails with 100 when the range is full and changes nothing on disk', () => {
    for (let i = 0; i < 13; i++) assert.equal(call('ADD', pod(`c${i}`, `p${i}`), netconf()).code, 0); // .2-.14
    const before = readFileSync(storePaths(dir, 'unit').state, 'utf8');
    const r = call('ADD', pod('full', 'x'), netconf());
    assert.equal((r.out as { code: number }).code, 100);
    assert.equal(readFileSync(storePaths(dir, 'unit').state, 'utf8'), before);
    const s = call('STATUS', {}, netconf());
    assert.equal((s.out as { code: number }).code, 50);
  });

  it('CHECK verifies the attachment and prevResult; GC frees what is not a valid attachment; STATUS is silent when fine', () => {
    call('ADD', pod('keep', 'a'), netconf());
    call('ADD', pod('drop', 'b'), netconf());
    assert.equal(
      call('CHECK', pod('keep', 'a'), netconf({ prevResult: { ips: [{ address: '10.5.0.2/28' }] } })).code,
      0,
    );
    const wrong = call('CHECK', pod('keep', 'a'), netconf({ prevResult: { ips: [{ address: '10.5.0.3/28' }] } }));
    assert.equal((wrong.out as { code: number }).code, 3);
    const gc = call(
      'GC',
      {},
      netconf({ cniVersion: '1.1.0', 'cni.dev/valid-attachments': [{ containerID: 'keep', ifname: 'eth0' }] }),
    );
    assert.equal(gc.code, 0);
    assert.deepEqual(Object.keys(readState(storePaths(dir, 'unit')).entries), ['10.5.0.2']);
    const st = call('STATUS', {}, netconf());
    assert.deepEqual([st.code, st.out], [0, undefined]);
  });

  it('keeps the store root-only and refuses a corrupt state file with code 101', () => {
    call('ADD', pod('c1', 'a'), netconf());
    const paths = storePaths(dir, 'unit');
    assert.equal(statSync(paths.state).mode & 0o777, 0o600);
    assert.equal(statSync(paths.dir).mode & 0o777, 0o700);
    assert.equal(statSync(paths.lockDir).mode & 0o777, 0o700);
    writeFileSync(paths.state, '{"version":1,"entries":{"10.5.0.2":{"kind":"held"}},"last":{},"notes":[]}');
    const r = call('ADD', pod('c2', 'b'), netconf());
    assert.equal((r.out as { code: number }).code, 101);
    assert.match((r.out as { msg: string }).msg, /entry 10\.5\.0\.2 is malformed/);
  });
});
