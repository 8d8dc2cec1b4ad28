import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterKindOf, defaultNodeCount, parseClusterKind } from '../../cluster/components.js';

describe('local cluster: its kind', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kd-kind-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is what the last up recorded, even after a down (directories of either kind may stay behind)', async () => {
    writeFileSync(join(dir, 'kind'), 'runtime\n');
    // a real cluster's leftovers do not make it real
    writeFileSync(join(dir, 'k8s'), '');
    assert.equal(await clusterKindOf(dir, {}), 'runtime');
    writeFileSync(join(dir, 'kind'), 'real\n');
    assert.equal(await clusterKindOf(dir, { CLUSTER_KIND: 'runtime' }), 'real');
  });

  it('reads a recorded lite (the emulator and kubelet-lite, removed) as the runtime it ran on', async () => {
    writeFileSync(join(dir, 'kind'), 'lite\n');
    assert.equal(await clusterKindOf(dir, {}), 'runtime');
  });

  it("is the env file's kind when no kind was recorded (a cluster started before kind files)", async () => {
    writeFileSync(join(dir, 'env'), "export CLUSTER_KIND='real'\n");
    assert.equal(await clusterKindOf(dir, { CLUSTER_KIND: 'runtime' }), 'real');
  });

  it('is CLUSTER_KIND, else real, for a directory no up has used', async () => {
    assert.equal(await clusterKindOf(dir, {}), 'real');
    assert.equal(await clusterKindOf(dir, { CLUSTER_KIND: 'runtime' }), 'runtime');
    await assert.rejects(
      clusterKindOf(dir, { CLUSTER_KIND: 'kind' }),
      /cluster kind must be real or runtime, got "kind"/,
    );
    assert.throws(() => parseClusterKind('lite'), /cluster kind must be real or runtime/);
  });

  it('has two nodes by default when real, and none to count when runtime', () => {
    assert.equal(defaultNodeCount('real'), 2);
    assert.equal(defaultNodeCount('runtime'), 1);
  });
});
