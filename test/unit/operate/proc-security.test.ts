// The /proc readers the in-cluster test judges running containers with (test/support/proc-security.ts).
import assert from 'node:assert/strict';
import { isReadOnly, mountAt, parseMountInfo, parseProcStatus } from '../../support/proc-security.js';

const STATUS = `Name:\tnode
Umask:\t0022
State:\tS (sleeping)
Uid:\t65532\t65532\t65532\t65532
Gid:\t65532\t65532\t65532\t65532
CapInh:\t0000000000000000
CapPrm:\t0000000000000000
CapEff:\t0000000000000000
CapBnd:\t000001ffffffffff
CapAmb:\t0000000000000000
NoNewPrivs:\t1
Seccomp:\t2
Seccomp_filters:\t1
`;

// a container's view: optional fields (shared:, master:), a mount point with a space (\\040), two mounts at /hostvarrun
const MOUNTINFO = [
  '450 300 0:150 / / ro,relatime master:1 - overlay overlay rw,lowerdir=/a,upperdir=/b,workdir=/c',
  '515 450 0:39 / /hostvarrun rw,relatime - tmpfs tmpfs rw,mode=755',
  '516 515 0:39 / /hostvarrun ro,relatime - tmpfs tmpfs rw,mode=755',
  '517 516 254:0 /srv/run/containerd /hostvarrun/containerd rw,relatime shared:5 master:2 - ext4 /dev/vda rw',
  '600 450 0:152 /null /proc/keys rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755',
  '601 450 254:0 /opt/my\\040dir /opt/my\\040dir rw - ext4 /dev/vda rw',
  '',
].join('\n');

describe('proc-security: /proc/<pid>/status and mountinfo', () => {
  it('reads the capability sets, no_new_privs, seccomp and ids', () => {
    const s = parseProcStatus(STATUS);
    assert.deepEqual(s.caps, { inheritable: 0n, permitted: 0n, effective: 0n, bounding: 0x1ffffffffffn, ambient: 0n });
    assert.equal(s.noNewPrivs, 1);
    assert.equal(s.seccomp, 2);
    assert.deepEqual(s.uids, [65532, 65532, 65532, 65532]);
    assert.deepEqual(s.gids, [65532, 65532, 65532, 65532]);
  });

  it('refuses a status without a field it needs, or with a bad value', () => {
    assert.throws(() => parseProcStatus(STATUS.replace(/^Seccomp:.*\n/m, '')), /no Seccomp: line/);
    assert.throws(() => parseProcStatus(STATUS.replace('CapEff:\t0000000000000000', 'CapEff:\tzz')), /bad CapEff/);
    assert.throws(() => parseProcStatus(STATUS.replace('Uid:\t65532\t65532\t65532\t65532', 'Uid:\t1')), /bad Uid/);
  });

  it('reads each mount point with its per-mount options (not the superblock options after " - ")', () => {
    const mounts = parseMountInfo(MOUNTINFO);
    assert.equal(mounts.length, 6);
    assert.ok(isReadOnly(mountAt(mounts, '/')), 'the root: ro per mount, though the overlay is rw');
    assert.deepEqual(mountAt(mounts, '/hostvarrun/containerd'), {
      root: '/srv/run/containerd',
      mountPoint: '/hostvarrun/containerd',
      options: ['rw', 'relatime'],
      fsType: 'ext4',
    });
    assert.equal(mountAt(mounts, '/proc/keys').root, '/null');
    assert.equal(mountAt(mounts, '/opt/my dir').root, '/opt/my dir');
  });

  it('takes the last mount at a path (the one on top) and names what is mounted when a path is not', () => {
    const mounts = parseMountInfo(MOUNTINFO);
    assert.ok(isReadOnly(mountAt(mounts, '/hostvarrun')));
    assert.throws(() => mountAt(mounts, '/opt/cni/bin'), /nothing is mounted at \/opt\/cni\/bin: \/ \/hostvarrun/);
    assert.throws(() => parseMountInfo('1 2 3'), /bad mountinfo line/);
  });
});
