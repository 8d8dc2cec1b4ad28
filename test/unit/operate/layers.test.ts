// The rooms of src/ (docs/development.md, "Architecture: where things live") import only from rooms below them:
// never sideways (the agent, the controller and the kubectl plugin know nothing of each other) and never up.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';

/** Each room's rank: a room may import from rooms of a higher rank only (and from itself). */
const RANK: Record<string, number> = {
  cli: 0,
  daemon: 1,
  controller: 1,
  'kubectl-plugin': 1,
  cni: 2,
  cri: 3,
  api: 4,
  kube: 5,
  observability: 6,
  util: 7,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The room of a path below src/ (its first folder). */
function roomOf(src: string, path: string): string {
  return relative(src, path).split('/')[0] ?? '';
}

/** Every relative module a file imports or re-exports, static or dynamic. */
function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) if (match[1]) found.push(match[1]);
  return found;
}

describe('the rooms of src/', () => {
  const src = join(packageRoot(), 'src');

  it('has a rank for every room', () => {
    const rooms = readdirSync(src, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    assert.deepEqual(
      rooms.filter((room) => RANK[room] === undefined),
      [],
    );
  });

  it('imports only from rooms below', () => {
    const wrong: string[] = [];
    for (const file of sourceFiles(src)) {
      const from = roomOf(src, file);
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        const to = roomOf(src, resolve(dirname(file), specifier));
        if (to === from) continue;
        if ((RANK[to] ?? -1) <= (RANK[from] ?? -1)) wrong.push(`${relative(src, file)} imports ${specifier} (${to})`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('would see an import up or sideways', () => {
    assert.deepEqual(importsOf(`import { a } from '../daemon/x.js';\nconst m = await import('../cli/y.js');`), [
      '../daemon/x.js',
      '../cli/y.js',
    ]);
  });
});
