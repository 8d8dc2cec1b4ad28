import assert from 'node:assert/strict';
import {
  decodeConfig,
  DEFAULT_DATA_DIR,
  MINUTE_MS,
  parseIpamConfig,
  reservedDuration,
  RESERVED_IP_DURATION_ANNOTATION,
} from '../../../src/cni/config.js';
import { CniError } from '../../../src/cni/errors.js';
import { formatIp } from '../../../src/cni/ip.js';

function conf(ipam: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cniVersion: '1.0.0', name: 'net1', ipam: { type: 'kruise-ipam', ...ipam }, ...extra };
}

function codeOf(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CniError, `not a CniError: ${String(err)}`);
    return { code: err.code, message: err.message };
  }
  assert.fail('no error');
}

describe('cni config: host-local compatible parsing and validation', () => {
  it('reads ranges with host-local defaults (start .1, end before broadcast, gateway .1)', () => {
    const c = parseIpamConfig(conf({ ranges: [[{ subnet: '10.1.0.0/24' }]] }));
    assert.equal(c.networkName, 'net1');
    assert.equal(c.dataDir, DEFAULT_DATA_DIR);
    assert.equal(c.minuteMs, MINUTE_MS);
    const r = c.rangeSets[0]!.ranges[0]!;
    assert.equal(formatIp({ family: 4, value: r.start }), '10.1.0.1');
    assert.equal(formatIp({ family: 4, value: r.end }), '10.1.0.254');
    assert.equal(formatIp(r.gateway), '10.1.0.1');
    assert.equal(c.rangeSets[0]!.key, '10.1.0.0/24');
  });

  it('reads rangeStart, rangeEnd, gateway, routes, dataDir and a dual-stack pair of range sets', () => {
    const c = parseIpamConfig(
      conf({
        ranges: [
          [{ subnet: '10.1.0.0/16', rangeStart: '10.1.0.10', rangeEnd: '10.1.0.20', gateway: '10.1.0.254' }],
          [{ subnet: 'fd00:1::/64' }],
        ],
        routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0', gw: 'fd00:1::1' }],
        dataDir: '/run/x',
      }),
    );
    assert.deepEqual(
      c.rangeSets.map((s) => [s.family, s.key]),
      [
        [4, '10.1.0.0/16'],
        [6, 'fd00:1::/64'],
      ],
    );
    assert.equal(formatIp(c.rangeSets[0]!.ranges[0]!.gateway), '10.1.0.254');
    assert.deepEqual(c.routes, [{ dst: '0.0.0.0/0' }, { dst: '::/0', gw: 'fd00:1::1' }]);
    assert.equal(c.dataDir, '/run/x');
  });

  it('accepts the legacy single subnet at the ipam level', () => {
    const c = parseIpamConfig(conf({ subnet: '192.168.5.0/24', rangeStart: '192.168.5.100' }));
    assert.equal(formatIp({ family: 4, value: c.rangeSets[0]!.ranges[0]!.start }), '192.168.5.100');
  });

  it('reads pod annotations from runtimeConfig, GC attachments and prevResult', () => {
    const c = parseIpamConfig(
      conf(
        { subnet: '10.0.0.0/24' },
        {
          runtimeConfig: { 'io.kubernetes.cri.pod-annotations': { [RESERVED_IP_DURATION_ANNOTATION]: '5', n: 3 } },
          'cni.dev/valid-attachments': [{ containerID: 'abc', ifname: 'eth0' }],
          prevResult: { ips: [{ address: '10.0.0.7/24' }] },
        },
      ),
    );
    assert.deepEqual(c.podAnnotations, { [RESERVED_IP_DURATION_ANNOTATION]: '5' });
    assert.deepEqual(c.validAttachments, [{ containerId: 'abc', ifName: 'eth0' }]);
    assert.deepEqual(c.prevIps, ['10.0.0.7']);
  });

  it('rejects bad configurations with code 7 (invalid network configuration) and a message naming the field', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...conf({ subnet: '10.0.0.0/24' }), name: 'bad/name' }, /name=/],
      [{ cniVersion: '1.0.0', name: 'n' }, /ipam is required/],
      [conf({}), /needs ranges/],
      [conf({ ranges: [] }), /non-empty/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/33' }]] }), /ranges\[0\]\[0\]\.subnet.*not a CIDR/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/24', rangeStart: '10.0.1.1' }]] }), /rangeStart=10.0.1.1 is outside/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/24', rangeStart: '10.0.0.9', rangeEnd: '10.0.0.3' }]] }), /after rangeEnd/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/24', gateway: 'nope' }]] }), /gateway="nope" is not an IP/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/24' }, { subnet: 'fd00::/64' }]] }), /mixes IPv4 and IPv6/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/24' }], [{ subnet: '10.0.0.128/25' }]] }), /overlap/],
      [conf({ ranges: [[{ subnet: '10.0.0.0/31' }]] }), /too small/],
      [conf({ subnet: '10.0.0.0/24', ranges: [[{ subnet: '10.1.0.0/24' }]] }), /either ranges or/],
      [conf({ subnet: '10.0.0.0/24', routes: [{ dst: 'x' }] }), /routes\[0\]\.dst/],
      [conf({ subnet: '10.0.0.0/24', dataDir: 'relative' }), /absolute/],
      [conf({ subnet: '10.0.0.0/24', dataDir: '/a\0b' }), /^ipam\.dataDir=.*NUL/],
      [conf({ subnet: '10.0.0.0/24', dataDir: `/x/${'c'.repeat(256)}` }), /^ipam\.dataDir=.*longer than 255 bytes/],
      [conf({ subnet: '10.0.0.0/24', dataDir: `/${'d/'.repeat(1901)}` }), /^ipam\.dataDir=.*3803 bytes, at most 3800/],
      [
        { ...conf({ subnet: '10.0.0.0/24' }), name: 'n'.repeat(5000) },
        /^name="n{64}"\.\.\. \(5000 characters\): at most 255/,
      ],
      [conf({ subnet: '10.0.0.0/24', testOnlyMinuteMs: 0 }), /testOnlyMinuteMs/],
      [conf({ subnet: '10.0.0.0/24' }, { 'cni.dev/valid-attachments': [{ containerID: 1 }] }), /valid-attachments/],
    ];
    for (const [c, message] of cases) {
      const e = codeOf(() => parseIpamConfig(c));
      assert.equal(e.code, 7, `${e.message}`);
      assert.match(e.message, message);
    }
  });

  it('answers an unknown cniVersion with code 1 and bad JSON with code 6', () => {
    assert.equal(codeOf(() => parseIpamConfig({ ...conf({ subnet: '10.0.0.0/24' }), cniVersion: '0.2.0' })).code, 1);
    assert.equal(codeOf(() => decodeConfig('{nope')).code, 6);
    assert.equal(codeOf(() => decodeConfig('[1]')).code, 6);
  });

  it('reads reserved-ip-duration: minutes, explicit zero, absent, and malformed values', () => {
    const d = (v?: string) => reservedDuration(v === undefined ? {} : { [RESERVED_IP_DURATION_ANNOTATION]: v });
    assert.deepEqual(d('1'), { kind: 'minutes', minutes: 1 });
    assert.deepEqual(d(' 10 '), { kind: 'minutes', minutes: 10 });
    assert.deepEqual(d('0'), { kind: 'none' });
    assert.deepEqual(d(), { kind: 'absent' });
    for (const bad of ['-1', '1.5', 'ten', '', '1m', '99999999', '525601']) {
      assert.deepEqual(d(bad), { kind: 'invalid', value: bad }, bad);
    }
  });
});
