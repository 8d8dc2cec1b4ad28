// mkdir -p that ends: every failure is an error naming the path, in a bounded number of calls.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirectories } from '../../../src/cni/dirs.js';

describe('cni dirs: makeDirectories', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'kruise-ipam-dirs-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const fails = (path: string, code: string, at: string) =>
    assert.throws(
      () => makeDirectories(path, 0o700),
      (err: NodeJS.ErrnoException) => err.code === code && err.path === at,
      `${path}: ${code} at ${at}`,
    );

  it('creates missing parents with the mode and accepts an existing directory', () => {
    const deep = join(dir, 'a', 'b', 'c');
    makeDirectories(deep, 0o700);
    makeDirectories(deep, 0o700);
    assert.equal(statSync(join(dir, 'a')).mode & 0o777, 0o700);
    assert.ok(statSync(deep).isDirectory());
  });

  it('fails on a file, under a file, under a dangling link and under /proc, naming the path', () => {
    writeFileSync(join(dir, 'f'), '');
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    fails(join(dir, 'f'), 'ENOTDIR', join(dir, 'f'));
    fails(join(dir, 'f', 'x', 'y'), 'ENOTDIR', join(dir, 'f', 'x', 'y'));
    fails(join(dir, 'dangling', 'x'), 'ENOENT', join(dir, 'dangling'));
    // Node's recursive mkdirSync never returns here (ENOENT for the child, EEXIST for /proc, again and again)
    fails('/proc/kruise-ipam-test/x', 'ENOENT', '/proc/kruise-ipam-test');
  });
});
