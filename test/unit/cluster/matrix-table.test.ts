import assert from 'node:assert/strict';
import {
  cellGreen,
  matrixTable,
  suiteFromMocha,
  suiteFromOpenKruiseOutput,
  TABLE_BEGIN,
  TABLE_END,
  withTable,
  type CellResult,
} from '../../cluster/matrix-table.js';

const versions = {
  kubernetes: 'v1.37.2',
  etcd: 'v3.6.16',
  crictl: 'v1.37.0',
  runtime: 'v2.4.2',
  runc: 'v1.3.3',
  cniPlugins: 'v1.10.0',
};

function result(overrides: Partial<CellResult>): CellResult {
  return {
    cell: { kubernetes: '1.37', runtime: 'containerd-2.4' },
    versions,
    date: '2026-11-29T10:00:00.000Z',
    warmUpSeconds: 20,
    coldUpSeconds: 600,
    e2e: { passed: 10, failed: 0, known: 0, failures: [], seconds: 900 },
    openkruise: {},
    load: [2, 3],
    ...overrides,
  };
}

describe('compatibility matrix: results and table', () => {
  it("reads mocha's JSON report: counts, and each failure by its full title and first line", () => {
    const suite = suiteFromMocha({
      stats: { passes: 3, failures: 1, duration: 61_000 },
      failures: [{ fullTitle: 'CRR on sidecars restarts it', err: { message: 'expected 1\nactual 0' } }],
    });
    assert.deepEqual(suite, {
      passed: 3,
      failed: 1,
      known: 0,
      failures: ['CRR on sidecars restarts it: expected 1'],
      seconds: 61,
    });
  });

  it("reads openkruise-e2e's verdict and failed cases; known cases are not failures of ours", () => {
    const output = [
      'PASS      12.0 s  pulls an image',
      'FAILED    30.5 s  recreates containers with preStopHook',
      '      Expected Recreating to equal Pending (crr_test.go:120)',
      'KNOWN      3.0 s  a case',
      'ACCEPTED: 4 passed, 2 failed (1 known, not ours), 10 not selected; 95 s',
    ].join('\n');
    assert.deepEqual(suiteFromOpenKruiseOutput(output), {
      passed: 4,
      failed: 1,
      known: 1,
      failures: ['recreates containers with preStopHook: Expected Recreating to equal Pending (crr_test.go:120)'],
      seconds: 95,
    });
    const broken = suiteFromOpenKruiseOutput('building...\ncluster: up failed\n');
    assert.match(broken.error ?? '', /no verdict line: building\.\.\. \| cluster: up failed/);
  });

  it('rows newest Kubernetes first; failures by name; cold and warm times; green only with nothing failed', () => {
    const failing = result({
      cell: { kubernetes: '1.36', runtime: 'cri-o' },
      versions: { ...versions, kubernetes: 'v1.36.3', runtime: 'v1.36.1' },
      e2e: { passed: 9, failed: 1, known: 0, failures: ['IP retention | keeps: no annotations'], seconds: 600 },
      commit: '0735862a1b2c-dirty',
    });
    const table = matrixTable([failing, result({})]).split('\n');
    assert.equal(table.length, 4);
    assert.match(
      table[2]!,
      /^\| Kubernetes v1\.37\.2 on containerd-2\.4 \(v2\.4\.2\) \| 2026-11-29 \| 10 passed, 0 failed \|/,
    );
    assert.match(table[2]!, /cold 10\.0 min, warm 0\.3 min; e2e 15\.0 min/);
    assert.match(table[3]!, /e2e: IP retention \\\| keeps: no annotations/);
    assert.match(table[3]!, /\| 2026-11-29 at 0735862a1b2c-dirty \|/);
    assert.equal(cellGreen(result({})), true);
    assert.equal(cellGreen(failing), false);
    const { e2e: _e2e, ...notRun } = result({});
    assert.equal(cellGreen(notRun), false);
  });

  it('replaces only the block between the markers, or appends it', () => {
    const page = `# Compatibility\n\nintro\n\n${TABLE_BEGIN}\nold\n${TABLE_END}\n\nafter\n`;
    assert.equal(withTable(page, 'new'), `# Compatibility\n\nintro\n\n${TABLE_BEGIN}\nnew\n${TABLE_END}\n\nafter\n`);
    assert.equal(withTable('# C\n', 't'), `# C\n\n${TABLE_BEGIN}\nt\n${TABLE_END}\n`);
  });
});
