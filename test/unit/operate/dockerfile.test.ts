// The Dockerfile cannot be built here (no Docker engine: test/cluster/image builds the same image with umoci, and
// test/component/cluster/image.test.ts runs it), so what can be checked by reading it is: the base image is Node
// 24 slim (the engines range), production install with `npm ci --omit=dev`, every file it copies from the context
// exists and is not excluded by .dockerignore, every package.json bin and every command a deploy/ workload runs is
// a command on the image's PATH that points at a compiled src/cli entry, the image's user is not root, and it says
// what the engine-less build's spec.ts says.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';
import { APP_DIR, IMAGE_COMMANDS, IMAGE_CONFIG } from '../../cluster/image/spec.js';

const root = packageRoot();
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const stages = instructions
  .join('\n')
  .split(/^FROM /m)
  .slice(1)
  .map((s) => `FROM ${s}`);
const finalStage = stages[stages.length - 1] ?? '';
const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  bin?: Record<string, string>;
  engines?: { node?: string };
};

/** `ln -s <target> /usr/local/bin/<name>` in the final stage: command name → target. */
function linkedCommands(): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of finalStage.matchAll(/ln -s (\S+) \/usr\/local\/bin\/(\S+)/g)) out.set(m[2]!, m[1]!);
  return out;
}

function isIgnored(path: string): boolean {
  return ignored.some((pattern) => {
    const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`);
    return re.test(path);
  });
}

describe('Dockerfile', () => {
  it('builds on and runs on Node 24 slim, the major version of package.json engines', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    assert.ok(froms.length >= 2, 'a build stage and a runtime stage');
    const major = /(\d+)/.exec(pkg.engines?.node ?? '')?.[1];
    for (const from of froms) assert.match(from, new RegExp(`^FROM node:${major}-[a-z]+-slim\\b`), from);
  });

  it('installs production dependencies only in the image, with the lock file', () => {
    assert.match(finalStage, /npm ci --omit=dev/);
    assert.doesNotMatch(finalStage, /npm install/);
    assert.match(finalStage, /COPY package\.json package-lock\.json/);
  });

  it('copies only files that exist and are not excluded by .dockerignore', () => {
    const copies = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='));
    assert.ok(copies.length > 0);
    for (const copy of copies) {
      const parts = copy.split(/\s+/).slice(1);
      for (const source of parts.slice(0, -1)) {
        if (source === '.') continue;
        assert.ok(existsSync(join(root, source)), `${source} exists (${copy})`);
        assert.ok(!isIgnored(source), `${source} is not in .dockerignore`);
      }
    }
    for (const needed of ['src', 'proto', 'package.json', 'package-lock.json', 'tsconfig.json']) {
      assert.ok(!isIgnored(needed), `${needed} reaches the build`);
    }
    for (const heavy of ['node_modules', '.git', 'dist']) assert.ok(isIgnored(heavy), `${heavy} stays out`);
  });

  it('puts every package.json bin and every command of deploy/ workloads on PATH, pointing at a src/cli entry', () => {
    const linked = linkedCommands();
    const wanted = new Map<string, string>(Object.entries(pkg.bin ?? {}));
    /** Commands the image runs itself: they must be directly executable (shebang). */
    const run = new Set<string>();
    const rendered = execFileSync('kubectl', ['kustomize', join(root, 'deploy', 'overlays', 'ip-retention')], {
      encoding: 'utf8',
    });
    for (const doc of loadAll(rendered) as any[]) {
      for (const c of doc?.spec?.template?.spec?.containers ?? []) {
        if (Array.isArray(c.command)) {
          wanted.set(c.command[0], `dist/src/cli/${c.command[0]}.js`);
          run.add(c.command[0]);
        }
      }
    }
    const entrypoint = /^ENTRYPOINT \["([^"]+)"/m.exec(finalStage)?.[1];
    assert.ok(entrypoint, 'an ENTRYPOINT');
    wanted.set(entrypoint, `dist/src/cli/${entrypoint}.js`);
    run.add(entrypoint);
    for (const [command, binPath] of wanted) {
      const target = linked.get(command);
      assert.ok(target, `${command} is linked into /usr/local/bin`);
      assert.ok(target.endsWith(`/${binPath}`), `${command} -> ${target} matches ${binPath}`);
      const source = binPath.replace(/^dist\//, '').replace(/\.js$/, '.ts');
      assert.ok(existsSync(join(root, source)), `${source} exists`);
      assert.match(finalStage, new RegExp(`chmod [^\\n]*${binPath.replace(/[.]/g, '\\.')}`), `${binPath} executable`);
      if (run.has(command)) {
        assert.match(readFileSync(join(root, source), 'utf8'), /^#!\/usr\/bin\/env node/, `${source} has a shebang`);
      }
    }
  });

  it('runs as a non-root user by default', () => {
    const user = /^USER (\S+)/m.exec(finalStage)?.[1];
    assert.ok(user, 'a USER');
    assert.notEqual(user.split(':')[0], '0');
    assert.notEqual(user.split(':')[0], 'root');
  });

  it('says what the engine-less build (test/cluster/image/spec.ts) makes: commands, entry point, user, env, ports', () => {
    assert.deepEqual(
      Object.fromEntries(linkedCommands()),
      Object.fromEntries(Object.entries(IMAGE_COMMANDS).map(([command, entry]) => [command, `${APP_DIR}/${entry}`])),
    );
    assert.deepEqual(JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(finalStage)?.[1] ?? 'null'), IMAGE_CONFIG.entrypoint);
    assert.equal(/^USER (\S+)$/m.exec(finalStage)?.[1], IMAGE_CONFIG.user);
    assert.equal(/^WORKDIR (\S+)$/m.exec(finalStage)?.[1], IMAGE_CONFIG.workingDir);
    const exposed = (/^EXPOSE (.+)$/m.exec(finalStage)?.[1] ?? '').split(/\s+/).map((port) => `${port}/tcp`);
    assert.deepEqual(exposed.sort(), [...IMAGE_CONFIG.exposedPorts].sort());
    for (const m of finalStage.matchAll(/^ENV (\w+)=(\S+)$/gm)) {
      assert.equal((IMAGE_CONFIG.env as Record<string, string>)[m[1]!], m[2], `ENV ${m[1]!}`);
    }
    assert.ok(/^ENV NODE_ENV=production$/m.test(finalStage));
  });
});
