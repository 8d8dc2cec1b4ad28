// docs/configuration.md stays true: each binary's section names every flag its --help prints (the usage texts are
// what --help prints) and every environment variable its sources read, and names no flag or variable that is gone.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CRI_USAGE } from '../../../src/daemon/cri-command.js';
import { CONTROLLER_USAGE } from '../../../src/controller/options.js';
import { IPAM_COMMAND_USAGE } from '../../../src/daemon/ipreservation/ls-command.js';
import { DAEMON_USAGE } from '../../../src/daemon/options.js';
import { PLUGIN_USAGE } from '../../../src/kubectl-plugin/command-line.js';
import { packageRoot } from '../../../src/util/repo-root.js';

const root = packageRoot();
const doc = readFileSync(join(root, 'docs', 'configuration.md'), 'utf8');

/** The text under `## <title>` up to the next `## `. */
function section(title: string): string {
  const parts = doc.split(/^## /m);
  const found = parts.find((p) => p.startsWith(`${title}\n`) || p.startsWith(`${title} `));
  assert.ok(found, `docs/configuration.md has a section "## ${title}"`);
  return found;
}

function flags(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((m) => m[0]));
}

/** Environment variables read as env.NAME / env['NAME'] in the .ts files under these src/ folders. */
function envReadIn(...folders: string[]): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'generated') walk(path);
      } else if (entry.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        for (const m of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g))
          names.add(m[1] ?? m[2]!);
      }
    }
  };
  for (const f of folders) walk(join(root, 'src', f));
  return names;
}

function envInUsage(usage: string): Set<string> {
  const names = new Set([...usage.matchAll(/\(env ([A-Z][A-Z0-9_]+)\)/g)].map((m) => m[1]!));
  const environment = /^Environment:\n((?: {2}.*\n?)+)/m.exec(usage)?.[1] ?? '';
  for (const m of environment.matchAll(/^ {2}([A-Z][A-Z0-9_]+)/gm)) names.add(m[1]!);
  for (const m of usage.matchAll(/\b(LOG_LEVEL|\$[A-Z][A-Z0-9_]+)\b/g)) names.add(m[1]!.replace(/^\$/, ''));
  return names;
}

function documentedEnv(text: string): Set<string> {
  return new Set([...text.matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)].map((m) => m[1]!));
}

/** Node's own variables the manifests set: documented, not read by our code. */
const NODE_OWN = new Set(['NODE_OPTIONS']);

const BINARIES = [
  {
    title: 'kruise-daemon',
    usages: [DAEMON_USAGE, CRI_USAGE, IPAM_COMMAND_USAGE],
    env: envReadIn('daemon', 'kube', 'cri', 'observability', 'util'),
  },
  { title: 'kruise-controller', usages: [CONTROLLER_USAGE], env: envReadIn('controller', 'kube', 'observability') },
  { title: 'kubectl-kruise-node', usages: [PLUGIN_USAGE], env: new Set<string>() },
  { title: 'kruise-ipam', usages: [], env: envReadIn('cni') },
];

describe('docs/configuration.md', () => {
  for (const binary of BINARIES) {
    it(`${binary.title}: every flag of --help, and only those`, () => {
      const text = section(binary.title);
      const inHelp = new Set(binary.usages.flatMap((u) => [...flags(u)]));
      const inDoc = flags(text);
      for (const f of inHelp) assert.ok(inDoc.has(f), `${binary.title}: ${f} is documented`);
      for (const f of inDoc)
        assert.ok(inHelp.has(f), `${binary.title}: ${f} is documented but --help has no such flag`);
    });

    it(`${binary.title}: every environment variable it reads, and only those`, () => {
      const text = section(binary.title);
      const read = new Set([...binary.env, ...binary.usages.flatMap((u) => [...envInUsage(u)])]);
      const inDoc = documentedEnv(text);
      for (const name of read) assert.ok(inDoc.has(name), `${binary.title}: ${name} is documented`);
      for (const name of inDoc) {
        if (/^[A-Z][A-Z0-9]*_[A-Z0-9_]+$|^[A-Z]{4,}$/.test(name) && !read.has(name) && !NODE_OWN.has(name)) {
          if (/^K8S_POD_/.test(name)) continue; // parts of CNI_ARGS, read from it
          assert.fail(`${binary.title}: ${name} is documented but nothing reads it`);
        }
      }
    });
  }
});
