// package-lock.json is current: its root package entry (packages[""]) says what package.json says, so `npm install`
// on a clean clone leaves the lock as it is (npm rewrites the root entry whenever a bin, a dependency range or the
// engines change), and every dependency of package.json is locked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';

type Manifest = Record<string, unknown>;

/** The package.json fields npm copies into the lock's root entry. */
const ROOT_ENTRY_FIELDS = [
  'name',
  'version',
  'license',
  'bin',
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'engines',
];

const root = packageRoot();
const readJson = (file: string): Manifest => JSON.parse(readFileSync(join(root, file), 'utf8')) as Manifest;

describe('package-lock.json', () => {
  const pkg = readJson('package.json');
  const lock = readJson('package-lock.json') as {
    name?: string;
    version?: string;
    packages?: Record<string, Manifest>;
  };

  it('has the root entry npm would write for package.json (bins, dependency ranges, engines)', () => {
    assert.equal(lock.name, pkg.name);
    assert.equal(lock.version, pkg.version);
    const entry = lock.packages?.[''];
    assert.ok(entry, 'packages[""] exists');
    for (const field of ROOT_ENTRY_FIELDS) {
      assert.deepEqual(
        entry[field],
        pkg[field],
        `packages[""].${field} matches package.json (npm install --package-lock-only --ignore-scripts)`,
      );
    }
  });

  it('locks every dependency of package.json', () => {
    for (const field of ['dependencies', 'devDependencies']) {
      for (const name of Object.keys((pkg[field] as Record<string, string> | undefined) ?? {})) {
        assert.ok(lock.packages?.[`node_modules/${name}`], `${name} (${field}) is in the lock`);
      }
    }
  });
});
