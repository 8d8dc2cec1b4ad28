// Pure parts of the cluster tooling (no processes): env file quoting, derived names, address ranges, CRI decoding.
import assert from 'node:assert/strict';
import { neededForRun } from '../../support/prepare-run.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crioRegistriesConf, runcWrapperScript } from '../../cluster/runtime/crio-config.js';
import { formatEnvFile, parseEnvFile } from '../../cluster/env-file.js';
import { clusterPaths } from '../../cluster/paths.js';
import { decodeVersionResponse } from '../../cluster/runtime/cri-probe.js';
import { run } from '../../cluster/runtime/exec.js';
import { ipv4Range, podSubnet } from '../../cluster/runtime/pod-network.js';

describe('npm test: what is built before the first test', () => {
  it('a real cluster for e2e files, a runtime for component files, nothing for unit files', () => {
    const root = '/repo/dist/test';
    assert.equal(neededForRun([`${root}/unit/a.test.js`]), undefined);
    assert.equal(neededForRun([`${root}/unit/a.test.js`, `${root}/component/cri/b.test.js`]), 'runtime');
    assert.equal(neededForRun([`${root}/component/cri/b.test.js`, `${root}/e2e/c/d.test.js`]), 'cluster');
  });
});

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

describe("local cluster: CRI-O's runc wrapper and registries (the cri-o cell)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kd-crio-wrapper-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The wrapper around a fake runc that prints its arguments; returns what it printed. */
  async function runWrapper(args: string[]): Promise<string> {
    const fakeRunc = join(dir, 'runc');
    writeFileSync(fakeRunc, '#!/bin/sh\necho "runc $*"\n', { mode: 0o755 });
    const wrapper = join(dir, 'runc-wrapper');
    writeFileSync(wrapper, runcWrapperScript('test', fakeRunc), { mode: 0o755 });
    const result = await run(wrapper, args);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout.trim();
  }

  it("clamps a negative oomScoreAdj to 0 in the bundle's config.json (runc create), passing every argument on", async () => {
    const bundle = join(dir, 'bundle');
    mkdirSync(bundle);
    writeFileSync(join(bundle, 'config.json'), '{"process":{"args":["sh"],"oomScoreAdj":-998},"root":{"path":"r"}}');
    const out = await runWrapper(['--root', '/run/runc', 'create', '--bundle', bundle, '--pid-file', 'p', 'id1']);
    assert.equal(out, `runc --root /run/runc create --bundle ${bundle} --pid-file p id1`);
    assert.deepEqual(JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')), {
      process: { args: ['sh'], oomScoreAdj: 0 },
      root: { path: 'r' },
    });
  });

  it('clamps it in an exec process file (indented JSON too) and leaves a positive one alone', async () => {
    const processFile = join(dir, 'process.json');
    writeFileSync(processFile, '{\n  "args": ["true"],\n  "oomScoreAdj": -997\n}\n');
    await runWrapper(['exec', '--process', processFile, 'id1']);
    assert.equal((JSON.parse(readFileSync(processFile, 'utf8')) as { oomScoreAdj: number }).oomScoreAdj, 0);
    writeFileSync(processFile, '{"args":["true"],"oomScoreAdj":1000}');
    await runWrapper([`--process=${processFile}`]);
    assert.equal(readFileSync(processFile, 'utf8'), '{"args":["true"],"oomScoreAdj":1000}');
  });

  it('drops hugepage limits (indented JSON, the last member or not) where no hugetlb hierarchy is mounted', async function () {
    if (existsSync('/sys/fs/cgroup/hugetlb')) this.skip();
    const bundle = join(dir, 'bundle');
    mkdirSync(bundle);
    const spec = {
      process: { args: ['sh'] },
      linux: {
        resources: {
          memory: { limit: 1 },
          hugepageLimits: [
            { pageSize: '2MB', limit: 0 },
            { pageSize: '1GB', limit: 0 },
          ],
        },
        other: { hugepageLimits: [{ pageSize: '2MB', limit: 0 }], after: true },
      },
    };
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec, null, '\t'));
    await runWrapper(['create', '--bundle', bundle, 'id1']);
    assert.deepEqual(JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')), {
      process: { args: ['sh'] },
      linux: { resources: { memory: { limit: 1 } }, other: { after: true } },
    });
  });

  it('marks every local registry insecure (plain http) and reads short names as docker.io, as containerd does', () => {
    const conf = crioRegistriesConf('test', ['10.1.255.1:5000', '10.1.255.1:5001']);
    assert.match(conf, /^unqualified-search-registries = \["docker\.io"\]$/m);
    assert.match(conf, /\[\[registry\]\]\nlocation = "10\.1\.255\.1:5000"\ninsecure = true/);
    assert.match(conf, /\[\[registry\]\]\nlocation = "10\.1\.255\.1:5001"\ninsecure = true/);
  });
});
