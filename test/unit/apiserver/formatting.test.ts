// emulator: the subject under test (unit tests of the emulator's own modules)
import assert from 'node:assert/strict';
import { humanDuration } from '../../cluster/apiserver/age.js';
import { evaluateJsonPath, parseJsonPath } from '../../cluster/apiserver/jsonpath.js';
import { printerColumnsTable } from '../../cluster/apiserver/table.js';

describe('apiserver ages (kube HumanDuration)', () => {
  const s = 1000;
  const cases: [number, string][] = [
    [0, '0s'],
    [59 * s, '59s'],
    [119 * s, '119s'],
    [120 * s, '2m'],
    [125 * s, '2m5s'],
    [62 * 60 * s, '62m'],
    [3 * 3600 * s, '3h'],
    [5 * 3600 * s + 3 * 60 * s, '5h3m'],
    [30 * 3600 * s, '30h'],
    [3 * 86400 * s + 4 * 3600 * s, '3d4h'],
    [100 * 86400 * s, '100d'],
    [3 * 365 * 86400 * s + 10 * 86400 * s, '3y10d'],
    [-5 * s, '<invalid>'],
  ];
  for (const [ms, text] of cases) it(`${ms} ms → ${text}`, () => assert.equal(humanDuration(ms), text));
});

describe('apiserver JSONPath subset', () => {
  const obj = {
    spec: { size: 3, tags: ['a', 'b'], 'dotted.key': 'x' },
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Synced', status: 'False' },
      ],
    },
  };
  const eval1 = (p: string): unknown[] => evaluateJsonPath(parseJsonPath(p), obj);

  it('follows fields, indexes, wildcards and filters', () => {
    assert.deepEqual(eval1('.spec.size'), [3]);
    assert.deepEqual(eval1('.spec.tags[1]'), ['b']);
    assert.deepEqual(eval1('.spec.tags[-1]'), ['b']);
    assert.deepEqual(eval1('.spec.tags[*]'), ['a', 'b']);
    assert.deepEqual(eval1(".spec['dotted.key']"), ['x']);
    assert.deepEqual(eval1('.status.conditions[?(@.type=="Ready")].status'), ['True']);
    assert.deepEqual(eval1('{.status.conditions[?(@.type!="Ready")].type}'), ['Synced']);
    assert.deepEqual(eval1('.spec.missing'), []);
  });

  it('rejects what it cannot parse', () => {
    assert.throws(() => parseJsonPath('.spec..x'), /empty field name/);
    assert.throws(() => parseJsonPath('.spec[abc'), /unclosed/);
  });

  it('renders CRD printer columns, dates as ages, missing values as null', () => {
    const table = printerColumnsTable([
      { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
    assert.deepEqual(
      table.columns.map((c) => c.name),
      ['Name', 'Size', 'Ready', 'Phase', 'Age'],
    );
    const now = Date.parse('2024-01-01T01:02:00Z');
    const cells = table.cells({ ...obj, metadata: { name: 'w', creationTimestamp: '2024-01-01T00:00:00Z' } }, now);
    assert.deepEqual(cells, ['w', 3, 'True', null, '62m']);
  });

  it('gives CRDs without printer columns an Age column', () => {
    assert.deepEqual(
      printerColumnsTable([]).columns.map((c) => c.name),
      ['Name', 'Age'],
    );
  });
});
