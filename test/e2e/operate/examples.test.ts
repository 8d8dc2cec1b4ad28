// Every manifest in examples/ is applied with the real kubectl to the real API server (deploy/'s CRDs installed),
// after the placeholders are filled as `npm run dev` fills them (test/cluster/dev-guide.ts), in a namespace of this
// file's own, and reads back as written. What would start pods (Pod, StatefulSet) is applied with a server-side dry
// run: the API server admits, defaults and validates it and stores nothing, so no container runs for this test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../../../src/kube/object.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { fillExample } from '../../cluster/dev-guide.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';

const EXAMPLES = join(packageRoot(), 'examples');
/** Kinds whose objects start containers: checked by the API server without being stored. */
const STARTS_PODS = new Set(['Pod', 'StatefulSet', 'Deployment', 'DaemonSet', 'ReplicaSet', 'Job']);

type Doc = KubeObject & { kind: string };

describe('examples/', function () {
  this.timeout(120_000);
  let cluster: RealCluster;
  let namespace = '';
  let cacheDir: string;

  before(async () => {
    cluster = await useRealCluster();
    namespace = await createTestNamespace(cluster.admin, 'kd-examples');
    cacheDir = mkdtempSync(join(tmpdir(), 'kd-examples-kubectl-'));
  });

  after(async () => {
    if (namespace) await deleteTestNamespace(cluster.admin, namespace);
    rmSync(cacheDir, { recursive: true, force: true });
  });

  function kubectl(args: string[], input?: string): string {
    const result = spawnSync('kubectl', ['--kubeconfig', cluster.adminKubeconfig, '--cache-dir', cacheDir, ...args], {
      input: input ?? '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (result.status !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${result.status}: ${result.stderr}`);
    return result.stdout;
  }

  /** The example as `npm run dev` renders it, moved from `default` into this file's namespace. */
  function filled(file: string): string {
    const text = fillExample(readFileSync(join(EXAMPLES, file), 'utf8'), {
      registry: cluster.registry,
      node: cluster.nodes[0]!.name,
    });
    return text.replace(/^(\s+namespace:) default$/gm, `$1 ${namespace}`);
  }

  function assertReadsBack(stored: Doc, doc: Doc): void {
    assert.equal(stored.kind, doc.kind);
    assert.equal(stored.metadata?.name, doc.metadata?.name);
    assert.equal(stored.metadata?.namespace, namespace);
    assert.deepEqual(stored.metadata?.annotations ?? {}, {
      ...(doc.metadata?.annotations ?? {}),
      ...Object.fromEntries(
        Object.entries(stored.metadata?.annotations ?? {}).filter(([k]) => k.startsWith('kubectl.kubernetes.io/')),
      ),
    });
  }

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
    it(`${file}: kubectl apply accepts it and it reads back`, () => {
      const original = readFileSync(join(EXAMPLES, file), 'utf8');
      const text = filled(file);
      assert.doesNotMatch(text, /\$\{/, 'only the documented placeholders');
      const docs = loadAll(text) as Doc[];
      for (const doc of loadAll(original) as Doc[]) {
        assert.equal(doc.metadata?.namespace, 'default', `${doc.kind} ${doc.metadata?.name} names its namespace`);
      }
      const dryRun = docs.some((d) => STARTS_PODS.has(d.kind));
      const flags = dryRun ? ['--dry-run=server'] : [];
      const out = kubectl(['apply', ...flags, '-f', '-'], text);
      for (const doc of docs) {
        assert.match(
          out,
          new RegExp(
            `${doc.metadata?.name ?? ''} (created|configured|unchanged)${dryRun ? ' \\(server dry run\\)' : ''}`,
          ),
        );
      }
      if (dryRun) {
        // what the API server would store, as it answers a dry run
        const answered = JSON.parse(kubectl(['apply', ...flags, '-o', 'json', '-f', '-'], text)) as
          Doc | { kind: 'List'; items: Doc[] };
        const items = answered.kind === 'List' ? (answered as { items: Doc[] }).items : [answered as Doc];
        assert.equal(items.length, docs.length);
        docs.forEach((doc, i) => assertReadsBack(items[i]!, doc));
        return;
      }
      for (const doc of docs) {
        const stored = JSON.parse(
          kubectl(['get', doc.kind, doc.metadata?.name ?? '', '-n', namespace, '-o', 'json']),
        ) as Doc;
        assertReadsBack(stored, doc);
      }
    });
  }
});
