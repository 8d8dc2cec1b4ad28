// README.md's way to run the package's commands from a clone (`npm run build`, then `npx kruise-daemon --help`), run
// as written with bash in a copy of this working tree (what a fresh clone holds: tracked and new files, no dist/) with
// the installed node_modules linked in and an npm cache of its own. Each bin of package.json must come out of the
// build executable: npx runs it directly, and so does a user typing its path.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import { readmeBlock } from '../../support/readme.js';

/** Copy the files a clone of this working tree would have (tracked or new, not ignored) into `to`. */
async function copyWorkingTree(from: string, to: string): Promise<void> {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: from,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(from, file)) && !statSync(join(from, file)).isDirectory());
  for (const file of files) {
    await mkdir(dirname(join(to, file)), { recursive: true });
    await cp(join(from, file), join(to, file), { verbatimSymlinks: true });
  }
}

function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -eo pipefail\n${script}`], { cwd, env });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe("README's commands from a fresh clone", function () {
  this.timeout(300_000);
  let work: string;
  let clone: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'kd-readme-commands-'));
    clone = join(work, 'clone');
    await copyWorkingTree(packageRoot(), clone);
    await symlink(await realpath(join(packageRoot(), 'node_modules')), join(clone, 'node_modules'));
  });

  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('npm run build, then npx kruise-daemon --help prints the usage, again after a clean rebuild', async () => {
    const env = { ...process.env, npm_config_cache: join(work, 'npm-cache'), npm_config_update_notifier: 'false' };
    const block = readmeBlock('test/e2e/operate/readme-commands.test.ts');
    // the second time dist/ is new but npx's cache already holds the package: npx no longer fixes the bins' modes
    for (const run of ['first build', 'clean rebuild']) {
      if (run === 'clean rebuild') await rm(join(clone, 'dist'), { recursive: true, force: true });
      const { code, out } = await bash(block, clone, env);
      assert.equal(code, 0, `${run}: ${out}`);
      assert.match(out, /^Usage: kruise-daemon \[flags\]/m, run);
      assert.match(out, /--runtime-socket PATH/, run);
    }
    const pkg = JSON.parse(await readFile(join(clone, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    for (const [name, file] of Object.entries(pkg.bin)) {
      const mode = statSync(join(clone, file)).mode;
      assert.equal(mode & 0o111, 0o111, `${name} (${file}) is executable: mode ${(mode & 0o777).toString(8)}`);
    }
  });
});
