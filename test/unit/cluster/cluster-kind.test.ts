import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterKindOf, parseClusterKind } from '../../cluster/components.js';

describe('local cluster: its kind', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kd-kind-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is what the last up recorded, even after a down (directories of either kind may stay behind)', async () => {
    writeFileSync(join(dir, 'kind'), 'lite\n');
    // a real cluster's leftovers do not make it real
    writeFileSync(join(dir, 'k8s'), '');
    assert.equal(await clusterKindOf(dir, {}), 'lite');
    writeFileSync(join(dir, 'kind'), 'real\n');
    assert.equal(await clusterKindOf(dir, { CLUSTER_KIND: 'lite' }), 'real');
  });

  it('is CLUSTER_KIND, else lite, for a directory no up has used', async () => {
    assert.equal(await clusterKindOf(dir, {}), 'lite');
    assert.equal(await clusterKindOf(dir, { CLUSTER_KIND: 'real' }), 'real');
    await assert.rejects(clusterKindOf(dir, { CLUSTER_KIND: 'kind' }), /cluster kind must be lite or real, got "kind"/);
    assert.throws(() => parseClusterKind(''), /cluster kind must be lite or real/);
  });
});
