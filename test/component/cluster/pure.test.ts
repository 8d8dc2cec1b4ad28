// Pure parts of the cluster tooling (no processes): env file quoting, derived names, address ranges, CRI decoding.
import assert from 'node:assert/strict';
import { formatEnvFile, parseEnvFile } from '../../cluster/env-file.js';
import { clusterPaths } from '../../cluster/paths.js';
import { decodeVersionResponse } from '../../cluster/runtime/cri-probe.js';
import { run } from '../../cluster/runtime/exec.js';
import { ipv4Range, podSubnet } from '../../cluster/runtime/pod-network.js';

describe('local cluster: pure helpers', () => {
  it('env file values survive a POSIX shell and our parser, quotes included', async () => {
    const vars = { PLAIN: 'a', QUOTE: "it's", SPACES: ' x  y ', DOLLAR: '$HOME `id` \\n', EMPTY: '' };
    const text = formatEnvFile(vars, 'header');
    assert.deepEqual(parseEnvFile(text), vars);
    const shell = await run('sh', [
      '-c',
      'eval "$1"; printf "%s|" "$PLAIN" "$QUOTE" "$SPACES" "$DOLLAR" "$EMPTY"',
      'sh',
      text,
    ]);
    assert.equal(shell.stdout, `a|it's| x  y |$HOME \`id\` \\n||`);
  });

  it('env file rejects what a shell line cannot hold and what it did not write', () => {
    assert.throws(() => formatEnvFile({ 'BAD-KEY': 'x' }), /not a valid variable name/);
    assert.throws(() => formatEnvFile({ K: 'a\nb' }), /line break/);
    assert.throws(() => parseEnvFile('export K=unquoted\n'), /single-quoted/);
    assert.throws(() => parseEnvFile("K='v'\n"), /expected export/);
    assert.throws(() => parseEnvFile("export K='v\n"), /unterminated/);
  });

  it('derives distinct names from distinct cluster dirs, within kernel limits', () => {
    const a = clusterPaths('/work/x/.cluster');
    const b = clusterPaths('/work/x/.cluster-other');
    assert.notEqual(a.bridge, b.bridge);
    assert.notEqual(a.podCgroupParent, b.podCgroupParent);
    assert.deepEqual(clusterPaths('/work/x/.cluster'), a, 'deterministic');
    for (const p of [a, b]) {
      assert.ok(p.bridge.length <= 15);
      assert.ok(p.preferredSubnetOctet >= 100 && p.preferredSubnetOctet <= 249);
      assert.ok(p.containerd.socket.startsWith(`${p.dir}/`));
    }
    assert.throws(() => clusterPaths('relative/dir'), /absolute path/);
    assert.throws(() => clusterPaths('/'), /at least two levels/);
    assert.throws(() => clusterPaths(`/tmp/${'x'.repeat(120)}`), /too long/);
  });

  it('computes IPv4 ranges for overlap checks', () => {
    assert.deepEqual(ipv4Range('10.1.0.0/16'), [0x0a010000, 0x0a01ffff]);
    assert.deepEqual(ipv4Range('10.1.2.3'), [0x0a010203, 0x0a010203]);
    assert.deepEqual(ipv4Range('10.1.2.3/8'), [0x0a000000, 0x0affffff]);
    assert.equal(ipv4Range('300.1.1.1/8'), undefined);
    assert.equal(ipv4Range('default'), undefined);
    assert.equal(podSubnet(123).gateway, '10.123.0.1');
  });

  it('decodes a CRI VersionResponse by hand', () => {
    const field = (n: number, s: string): Buffer =>
      Buffer.concat([Buffer.from([(n << 3) | 2, s.length]), Buffer.from(s)]);
    const bytes = Buffer.concat([field(1, '0.1.0'), field(2, 'containerd'), field(3, '1.6.20'), field(4, 'v1')]);
    assert.deepEqual(decodeVersionResponse(bytes), {
      version: '0.1.0',
      runtimeName: 'containerd',
      runtimeVersion: '1.6.20',
      runtimeApiVersion: 'v1',
    });
    assert.throws(() => decodeVersionResponse(Buffer.from([0x0a, 0x05, 0x61])), /truncated/);
  });
});
