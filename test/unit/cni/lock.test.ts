// The generation-file lock and the store's recovery from every half-done state a SIGKILL can leave.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FOREIGN_STALE_MS, GenerationLock, ownerAlive, selfIdentity, statOf } from '../../../src/cni/lock.js';
import { emptyState } from '../../../src/cni/state.js';
import { readState, storePaths, updateSync, writeState } from '../../../src/cni/store.js';
import { waitFor } from '../../support/wait.js';

function deadPid(): number {
  const r = spawnSync('true');
  assert.equal(r.status, 0);
  return r.pid;
}

describe('cni lock: generation files with stale-owner takeover', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kruise-ipam-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const owner = (pid: number, start = '1', ns = selfIdentity().ns, at = Date.now()) =>
    JSON.stringify({ pid, start, ns, at });

  it('acquires, reports busy while held by a live process, and acquires again after release', () => {
    const a = new GenerationLock(dir);
    const first = a.attempt();
    assert.equal(first.kind, 'acquired');
    const second = new GenerationLock(dir).attempt();
    assert.deepEqual(second, { kind: 'busy', owner: process.pid });
    if (first.kind === 'acquired') a.release(first.handle);
    assert.equal(new GenerationLock(dir).attempt().kind, 'acquired');
  });

  it('takes over from a dead owner, a torn lock file, and an owner whose PID was recycled', () => {
    for (const content of [owner(deadPid()), '', '{"pid":', owner(process.pid, 'not-my-start-time')]) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      writeFileSync(join(dir, 'g7'), content);
      const r = new GenerationLock(dir).attempt();
      assert.deepEqual(r, { kind: 'acquired', handle: { generation: 8 } }, content);
    }
  });

  it('treats a zombie owner (state Z) as dead', async function () {
    // perl (perl-base is essential on Debian) forks a reader that exits when we write a line; the parent sleeps
    // and never waits, so the exited reader stays a zombie until the parent goes
    const script = '$|=1; my $p = fork(); if ($p) { print "$p\\n"; sleep 60 } else { my $l = <STDIN>; exit 0 }';
    const child = spawn('perl', ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      const zombie = await new Promise<number>((resolve) =>
        child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
      );
      writeFileSync(join(dir, 'g1'), owner(zombie, statOf(zombie)!.start));
      assert.deepEqual(new GenerationLock(dir).attempt(), { kind: 'busy', owner: zombie }, 'alive while reading');
      child.stdin.write('go\n');
      await waitFor(() => statOf(zombie)?.state === 'Z', { message: `pid ${zombie} in state Z` });
      assert.equal(new GenerationLock(dir).attempt().kind, 'acquired');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('judges an owner in another PID namespace by age only', () => {
    const me = selfIdentity();
    const now = Date.now();
    const foreign = { pid: 1, start: 'x', ns: 'pid:[1]', at: now };
    assert.equal(ownerAlive(foreign, me, now + FOREIGN_STALE_MS - 1), true);
    assert.equal(ownerAlive(foreign, me, now + FOREIGN_STALE_MS), false);
  });

  it('withdraws a generation created from a stale listing (a higher one exists)', () => {
    // g4 was the top when this process listed; since then others went up to g9 and cleaned g5 away
    writeFileSync(join(dir, 'g4'), 'free');
    writeFileSync(join(dir, 'g9'), owner(process.pid, selfIdentity().start));
    let listings = 0;
    const list = (d: string) => (listings++ === 0 ? ['g4'] : readdirSync(d));
    const r = new GenerationLock(dir, Date.now, selfIdentity(), list).attempt();
    assert.deepEqual(r, { kind: 'retry' });
    assert.ok(!existsSync(join(dir, 'g5')), 'the stale g5 is withdrawn');
    assert.deepEqual(new GenerationLock(dir).attempt(), { kind: 'busy', owner: process.pid });
  });

  it('ignores a stray name with a leading zero instead of retrying forever on the generation it seems to name', () => {
    // g05 would read as generation 5, whose file g5 does not exist: every attempt would answer retry
    writeFileSync(join(dir, 'g2'), 'free');
    writeFileSync(join(dir, 'g05'), 'free');
    assert.deepEqual(new GenerationLock(dir).attempt(), { kind: 'acquired', handle: { generation: 3 } });
  });

  it('a top generation that cannot be read (a directory) is an error naming it, not a retry', () => {
    mkdirSync(join(dir, 'g4'));
    assert.throws(
      () => new GenerationLock(dir).attempt(),
      (err: NodeJS.ErrnoException) => err.code === 'EISDIR' && err.path === join(dir, 'g4'),
    );
  });

  it('cleans up old generations and temp files of dead processes, but not those of live ones', () => {
    writeFileSync(join(dir, 'g1'), 'free');
    writeFileSync(join(dir, 'g2'), 'free');
    writeFileSync(join(dir, `t.${deadPid()}.1.0`), 'x');
    writeFileSync(join(dir, `t.${process.pid}.1.0`), 'x');
    const r = new GenerationLock(dir).attempt();
    assert.equal(r.kind, 'acquired');
    assert.deepEqual(readdirSync(dir).sort(), ['g2', 'g3', `t.${process.pid}.1.0`]);
  });
});

describe('cni store: recovery from half-done states', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'kruise-ipam-store-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a torn temp file (killed before rename) is ignored and replaced by the next write', () => {
    const paths = storePaths(dataDir, 'n');
    mkdirSync(paths.dir, { recursive: true });
    const state = emptyState();
    state.last.x = '10.0.0.9';
    writeState(paths, state);
    writeFileSync(paths.temp, '{"version":1,"entr');
    assert.equal(readState(paths).last.x, '10.0.0.9');
    updateSync(paths, (s) => {
      s.last.x = '10.0.0.10';
      return { changed: true, value: undefined };
    });
    assert.equal(readState(paths).last.x, '10.0.0.10');
    assert.ok(!existsSync(paths.temp));
  });

  it('a lock left by a killed holder is taken over by the next update', () => {
    const paths = storePaths(dataDir, 'n');
    mkdirSync(paths.lockDir, { recursive: true });
    writeFileSync(
      join(paths.lockDir, 'g3'),
      JSON.stringify({ pid: deadPid(), start: '1', ns: selfIdentity().ns, at: Date.now() }),
    );
    writeFileSync(join(paths.lockDir, `t.${deadPid()}.5.0`), '');
    const v = updateSync(paths, () => ({ changed: false, value: 42 }));
    assert.equal(v, 42);
    const left = readdirSync(paths.lockDir);
    assert.ok(
      left.every((n) => !n.startsWith('t.')),
      left.join(','),
    );
    assert.equal(readFileSync(join(paths.lockDir, 'g5'), 'utf8'), 'free');
  });

  it('an update that throws writes nothing and releases the lock', () => {
    const paths = storePaths(dataDir, 'n');
    assert.throws(() =>
      updateSync(paths, (s) => {
        s.last.x = 'changed';
        throw new Error('boom');
      }),
    );
    assert.ok(!existsSync(paths.state));
    assert.equal(new GenerationLock(paths.lockDir).attempt().kind, 'acquired');
  });
});
