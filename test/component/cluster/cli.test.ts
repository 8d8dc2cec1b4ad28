// The cluster CLI: usage errors and missing prerequisites exit with 2 and say what is wrong; env and status
// speak about the running cluster.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterPaths } from '../../cluster/paths.js';
import { run } from '../../cluster/runtime/exec.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'cluster', 'cli.js');

function cli(args: string[], env: Record<string, string> = {}): ReturnType<typeof run> {
  return run(process.execPath, [CLI, ...args], { env, timeoutMs: 60_000 });
}

describe('local cluster: CLI', function () {
  let cluster: ClusterEnv;

  before(async function () {
    cluster = await useCluster();
  });

  it('rejects bad usage with exit code 2 and the usage text', async () => {
    for (const args of [
      [],
      ['bogus'],
      ['up', '--nodes', '0'],
      ['up', '--nodes', 'x'],
      ['down', '--nodes', '2'],
      ['up', '--wat'],
    ]) {
      const result = await cli(args, { CLUSTER_DIR: cluster.dir });
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /usage: npm run cluster/);
    }
  });

  it('rejects an unsafe CLUSTER_DIR with a clear message', async () => {
    const result = await cli(['status'], { CLUSTER_DIR: '/tmp/has space' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /CLUSTER_DIR must be an absolute path/);
  });

  it('env prints the env file and status reports every part healthy', async () => {
    const env = await cli(['env'], { CLUSTER_DIR: cluster.dir });
    assert.equal(env.code, 0, env.stderr);
    assert.equal(env.stdout, readFileSync(clusterPaths(cluster.dir).envFile, 'utf8'));
    const status = await cli(['status'], { CLUSTER_DIR: cluster.dir });
    assert.equal(status.code, 0, status.stdout);
    for (const part of ['registry ', 'registry-auth', 'pod-network', 'containerd']) {
      assert.match(status.stdout, new RegExp(`^ok\\s+${part}`, 'm'));
    }
  });

  it('env on a cluster that is not up says so', async () => {
    const dir = mkdtempSync('/tmp/kd-cluster-cli-');
    try {
      const result = await cli(['env'], { CLUSTER_DIR: dir });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /is not up/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('up without root exits 2 and names what is needed', async () => {
    const dir = mkdtempSync('/tmp/kd-cluster-nonroot-');
    chmodSync(dir, 0o777);
    try {
      // A new user namespace with no uid mapping: the CLI sees uid 65534 (not root), while file access is still
      // checked as root outside, so the build is readable wherever the clone lives (even under a 0700 mktemp dir).
      const result = await run('unshare', ['--user', process.execPath, CLI, 'up'], {
        env: { CLUSTER_DIR: join(dir, 'c') },
      });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /needs root/);
      assert.match(result.stderr, /containerd/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
