import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPaths, missingBinaries } from '../../cluster/k8s/binaries.js';
import {
  defaultStack,
  KNOWN_CELLS,
  MATRIX_CELLS,
  parseStack,
  recordStack,
  requestedStack,
  stackOf,
  stackVersions,
} from '../../cluster/stack.js';

describe('local cluster: its stack (Kubernetes minor and runtime)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kd-stack-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults to the newest cell: Kubernetes 1.37 on containerd 2.4, at the pinned versions', () => {
    assert.deepEqual(defaultStack(), { kubernetes: '1.37', runtime: 'containerd-2.4' });
    assert.deepEqual(requestedStack({}), defaultStack());
    const versions = stackVersions(defaultStack());
    assert.match(versions.kubernetes, /^v1\.37\.\d+$/);
    assert.match(versions.runtime, /^v2\.4\.\d+$/);
    assert.match(versions.runc, /^v1\.\d+\.\d+$/);
  });

  it('takes a minor in any spelling, and each minor its own default runtime', () => {
    assert.deepEqual(parseStack('v1.36.3', undefined), { kubernetes: '1.36', runtime: 'containerd-2.4' });
    assert.deepEqual(parseStack('1.35', 'containerd-2.2'), { kubernetes: '1.35', runtime: 'containerd-2.2' });
    assert.deepEqual(parseStack('1.33', undefined), { kubernetes: '1.33', runtime: 'containerd-1.6' });
    assert.deepEqual(requestedStack({ CLUSTER_KUBERNETES: '1.36', CLUSTER_RUNTIME: 'cri-o' }), {
      kubernetes: '1.36',
      runtime: 'cri-o',
    });
  });

  it('refuses an unknown version, an unknown runtime and a cell it does not run, naming what it runs', () => {
    assert.throws(() => parseStack('1.34', undefined), /unknown Kubernetes version "1.34".*1\.33, 1\.35, 1\.36, 1\.37/);
    assert.throws(() => parseStack('1.37', 'docker'), /unknown runtime "docker".*containerd-2\.4/);
    assert.throws(
      () => parseStack('1.37', 'cri-o'),
      /Kubernetes 1\.37 on cri-o is not a cell.*--kubernetes 1\.36 --runtime cri-o/,
    );
    assert.throws(() => parseStack('1.37', 'containerd-1.6'), /not a cell/);
  });

  it('lists the cells: containerd 2.x under 1.35-1.37, Debian containerd 1.6 under 1.33, CRI-O under 1.36', () => {
    assert.deepEqual(
      KNOWN_CELLS.map((c) => `${c.kubernetes}/${c.runtime}`),
      [
        '1.33/containerd-1.6',
        '1.35/containerd-2.4',
        '1.35/containerd-2.2',
        '1.36/containerd-2.4',
        '1.36/containerd-2.2',
        '1.36/cri-o',
        '1.37/containerd-2.4',
        '1.37/containerd-2.2',
      ],
    );
  });

  it("the matrix's default cells: each current minor once on containerd 2.x, both containerd minors, and CRI-O", () => {
    const names = MATRIX_CELLS.map((c) => `${c.kubernetes}/${c.runtime}`);
    assert.deepEqual(names, ['1.35/containerd-2.4', '1.36/containerd-2.2', '1.36/cri-o', '1.37/containerd-2.4']);
    assert.ok(MATRIX_CELLS.every((cell) => KNOWN_CELLS.includes(cell)));
  });

  it('is what up recorded; a directory from before stacks ran 1.33 on containerd 1.6; else what is asked', () => {
    assert.deepEqual(stackOf(dir, { CLUSTER_KUBERNETES: '1.36' }), { kubernetes: '1.36', runtime: 'containerd-2.4' });
    writeFileSync(join(dir, 'kind'), 'real\n');
    assert.deepEqual(stackOf(dir, {}), { kubernetes: '1.33', runtime: 'containerd-1.6' });
    recordStack(dir, { kubernetes: '1.35', runtime: 'containerd-2.2' });
    assert.deepEqual(stackOf(dir, {}), { kubernetes: '1.35', runtime: 'containerd-2.2' });
  });

  it("keys every binary by its version in the cache; the old cell runs Debian's containerd, runc and CNI plugins", () => {
    const built = binaryPaths({ kubernetes: '1.36', runtime: 'containerd-2.2' }, '/cache');
    assert.match(built.kubeBinDir, /^\/cache\/bin\/kubernetes-v1\.36\.\d+$/);
    assert.match(built.runtime.containerd, /^\/cache\/bin\/containerd-v2\.2\.\d+\/containerd$/);
    assert.match(built.runtime.runc, /^\/cache\/bin\/runc-v1\.\d+\.\d+\/runc$/);
    assert.match(built.runtime.cniPluginDir, /^\/cache\/bin\/cni-plugins-v1\.\d+\.\d+$/);
    assert.ok(missingBinaries(built).includes(built.runtime.containerd));
    const old = binaryPaths({ kubernetes: '1.33', runtime: 'containerd-1.6' }, '/cache');
    assert.equal(old.runtime.containerd, '/usr/bin/containerd');
    assert.equal(old.runtime.cniPluginDir, '/usr/lib/cni');
    assert.ok(!missingBinaries(old, 'runtime').length, 'nothing of the runtime is built for the old cell');
  });
});
