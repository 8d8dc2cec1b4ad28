// Every manifest in examples/ is applied with the real kubectl to the API emulator with deploy/'s CRDs, after the
// placeholders are filled as `npm run dev` fills them (test/cluster/dev-guide.ts), and reads back as written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../../../src/kube/object.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { fillExample } from '../../cluster/dev-guide.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';

const EXAMPLES = join(packageRoot(), 'examples');
const VARIABLES = { REGISTRY: '127.0.0.1:5000', NODE_NAME: 'kd-node-1' };

function filled(file: string): string {
  return fillExample(readFileSync(join(EXAMPLES, file), 'utf8'), {
    registry: VARIABLES.REGISTRY,
    node: VARIABLES.NODE_NAME,
  });
}

describe('examples/', function () {
  this.timeout(120_000);
  let emulator: EmulatorWithCrds;
  let cacheDir: string;

  before(async () => {
    emulator = await startEmulatorWithCrds();
    cacheDir = mkdtempSync(join(tmpdir(), 'kd-examples-kubectl-'));
  });

  after(async () => {
    await emulator?.close();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  /** kubectl as a child process; asynchronous, because the emulator answers from this process's event loop. */
  const kubectl = (args: string[], input?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn('kubectl', ['--kubeconfig', emulator.kubeconfig, '--cache-dir', cacheDir, ...args]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`kubectl ${args.join(' ')}: exit ${code}: ${stderr}`)),
      );
      child.stdin.end(input ?? '');
    });

  const files = readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

  it('has the four features', () => {
    for (const f of [
      'imagepulljob.yaml',
      'containerrecreaterequest.yaml',
      'launch-priority-pod.yaml',
      'statefulset-ip-retention.yaml',
    ]) {
      assert.ok(files.includes(f), f);
    }
  });

  for (const file of files) {
    it(`${file}: kubectl apply accepts it and it reads back`, async () => {
      const text = filled(file);
      assert.doesNotMatch(text, /\$\{/, 'only the documented placeholders');
      const out = await kubectl(['apply', '-f', '-'], text);
      for (const doc of loadAll(text) as (KubeObject & { kind: string })[]) {
        assert.match(out, new RegExp(`${doc.metadata?.name ?? ''} (created|configured|unchanged)`));
        const stored = JSON.parse(
          await kubectl([
            'get',
            doc.kind,
            doc.metadata?.name ?? '',
            '-n',
            doc.metadata?.namespace ?? 'default',
            '-o',
            'json',
          ]),
        ) as KubeObject & { spec?: unknown };
        assert.equal(stored.metadata?.name, doc.metadata?.name);
        assert.deepEqual(stored.metadata?.annotations ?? {}, {
          ...(doc.metadata?.annotations ?? {}),
          ...Object.fromEntries(
            Object.entries(stored.metadata?.annotations ?? {}).filter(([k]) => k.startsWith('kubectl.kubernetes.io/')),
          ),
        });
      }
    });
  }
});
