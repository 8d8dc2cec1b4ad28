// `npx mocha <file>` runs that file only (how docs/development.md says to run the tests one works on), `npm test`
// every test and `npm run test:unit` the unit tests only. Mocha adds the files named on its command line to the
// config's `spec` instead of replacing them (mochajs/mocha#5412), so the config names none and the scripts do.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../../src/util/repo-root.js';

const root = packageRoot();

/** The files whose tests `mocha --dry-run <args>` would run, with the repository's config. */
function filesRun(args: string[]): Set<string> {
  const result = spawnSync(
    process.execPath,
    [join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--dry-run', '--reporter', 'json', ...args],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as { tests: { file: string }[] };
  return new Set(report.tests.map((t) => relative(root, t.file)));
}

describe('test scripts', () => {
  it('mocha with a file runs that file only', () => {
    const self = relative(root, fileURLToPath(import.meta.url));
    assert.deepEqual([...filesRun([self])], [self]);
  });

  it('npm test runs every test file, npm run test:unit the unit tests only', () => {
    const scripts = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    assert.match(scripts.test ?? '', /mocha 'dist\/test\/\*\*\/\*\.test\.js'/);
    assert.match(scripts['test:unit'] ?? '', /mocha 'dist\/test\/unit\/\*\*\/\*\.test\.js'/);
    const config = JSON.parse(readFileSync(join(root, '.mocharc.json'), 'utf8')) as { spec?: unknown };
    assert.equal(config.spec, undefined, '.mocharc.json names no spec (it would be added to every run)');
  });
});
