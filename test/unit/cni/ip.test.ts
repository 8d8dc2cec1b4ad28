import assert from 'node:assert/strict';
import { canonicalIp, contains, formatNetwork, lastOf, parseCidr, parseIp } from '../../../src/cni/ip.js';

describe('cni ip: addresses and CIDRs', () => {
  it('parses and formats IPv4', () => {
    assert.deepEqual(parseIp('10.1.2.3'), { family: 4, value: 0x0a010203n });
    assert.equal(canonicalIp('192.168.0.255'), '192.168.0.255');
    for (const bad of ['10.1.2', '10.1.2.256', '01.1.1.1', '1.1.1.1.1', 'a.b.c.d', '', '10.1.2.3/24']) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('parses IPv6 in every form and formats it as RFC 5952 says', () => {
    assert.equal(canonicalIp('2001:0db8:0000:0000:0000:0000:0000:0001'), '2001:db8::1');
    assert.equal(canonicalIp('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1'); // first of two equal runs
    assert.equal(canonicalIp('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1'); // a single zero group stays
    assert.equal(canonicalIp('::'), '::');
    assert.equal(canonicalIp('::1'), '::1');
    assert.equal(canonicalIp('FD00::A'), 'fd00::a');
    assert.equal(canonicalIp('::ffff:10.1.2.3'), '::ffff:a01:203');
    for (const bad of ['1::2::3', ':::', '1:2:3:4:5:6:7:8:9', '12345::', 'fd00::g', '1:2:3:4:5:6:7::8']) {
      assert.equal(parseIp(bad), undefined, bad);
    }
  });

  it('parses CIDRs, keeps the host bits apart and knows what a network contains', () => {
    const c = parseCidr('10.1.2.3/16')!;
    assert.equal(formatNetwork(c.network), '10.1.0.0/16');
    assert.equal(lastOf(c.network), 0x0a01ffffn);
    assert.ok(contains(c.network, parseIp('10.1.255.255')!));
    assert.ok(!contains(c.network, parseIp('10.2.0.0')!));
    assert.ok(!contains(c.network, parseIp('::1')!));
    const v6 = parseCidr('fd00:1::5/64')!;
    assert.equal(formatNetwork(v6.network), 'fd00:1::/64');
    for (const bad of ['10.0.0.0', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/a', 'x/8'])
      assert.equal(parseCidr(bad), undefined, bad);
  });
});
