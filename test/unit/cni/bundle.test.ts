import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bundlePlugin, BundleError } from '../../../src/daemon/ipreservation/bundle.js';

describe('ipreservation bundle: the plugin as one file', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'kruise-ipam-bundle-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function tree(files: Record<string, string>): void {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
  }

  it('joins modules in dependency order, merges node: imports and drops exports', () => {
    tree({
      'src/cli/kruise-ipam.js':
        "import { run } from '../cni/a.js';\nimport { readFileSync } from 'node:fs';\nrun(readFileSync);\n",
      'src/cni/a.js':
        "import { helper } from './b.js';\nimport { join } from 'node:path';\nexport function run(f) { return helper(join, f); }\n",
      'src/cni/b.js':
        "import { readFileSync, statSync } from 'node:fs';\nexport const helper = (a, b) => [a, b, readFileSync, statSync];\n//# sourceMappingURL=b.js.map\n",
    });
    const out = bundlePlugin(root);
    assert.match(out, /^import \{ readFileSync, statSync \} from 'node:fs';$/m);
    assert.match(out, /^import \{ join \} from 'node:path';$/m);
    assert.ok(out.indexOf('const helper') < out.indexOf('function run'), 'b before a');
    assert.ok(out.indexOf('function run') < out.indexOf('run(readFileSync)'), 'a before the entry');
    assert.doesNotMatch(out, /^export /m);
    assert.doesNotMatch(out, /sourceMappingURL/);
  });

  it('refuses what it cannot join safely', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'src/cli/kruise-ipam.js': "import { x } from 'pino';\n" }, /only node: and relative imports/],
      [
        {
          'src/cli/kruise-ipam.js': "import { a } from '../cni/a.js';\nfunction same() {}\n",
          'src/cni/a.js': 'export function a() {}\nfunction same() {}\n',
        },
        /same is declared in both/,
      ],
      [
        {
          'src/cli/kruise-ipam.js': "import { a } from '../cni/a.js';\nimport { constants } from 'node:fs';\n",
          'src/cni/a.js': "import { constants } from 'node:os';\nexport const a = constants;\n",
        },
        /constants is imported from both node:os and node:fs/,
      ],
      [{ 'src/cli/kruise-ipam.js': 'export default 1;\n' }, /export form/],
      [{ 'src/cli/kruise-ipam.js': "const m = await import('./x.js');\n" }, /import form/],
      [
        {
          'src/cli/kruise-ipam.js': "import { a } from '../cni/a.js';\n",
          'src/cni/a.js': "import { b } from './b.js';\nexport const a = 1;\n",
          'src/cni/b.js': "import { a } from './a.js';\nexport const b = 2;\n",
        },
        /import cycle/,
      ],
    ];
    for (const [files, message] of cases) {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(root);
      tree(files);
      assert.throws(
        () => bundlePlugin(root),
        (e: unknown) => e instanceof BundleError && message.test(e.message),
        String(message),
      );
    }
  });
});
