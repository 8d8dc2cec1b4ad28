import assert from 'node:assert/strict';
import {
  isEmptyLabelSelector,
  labelKeyError,
  labelSelectorErrors,
  labelSelectorMatches,
  labelValueError,
} from '../../../src/api/label-selector.js';

describe('label selectors', () => {
  it('validates keys and values like Kubernetes', () => {
    assert.equal(labelKeyError('app'), undefined);
    assert.equal(labelKeyError('kubernetes.io/hostname'), undefined);
    assert.match(labelKeyError('Example.com/x') ?? '', /prefix part a lowercase RFC 1123 subdomain/);
    assert.match(labelKeyError('a/b/c') ?? '', /qualified name/);
    assert.match(labelKeyError('-x') ?? '', /name part must consist of/);
    assert.match(labelKeyError('x'.repeat(64)) ?? '', /no more than 63/);
    assert.equal(labelValueError(''), undefined);
    assert.match(labelValueError('a b') ?? '', /a valid label must be an empty string/);
  });

  it('lists the problems of a selector', () => {
    assert.deepEqual(
      labelSelectorErrors({ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'k', operator: 'Exists' }] }),
      [],
    );
    assert.deepEqual(labelSelectorErrors(undefined), []);
    assert.deepEqual(labelSelectorErrors({ matchExpressions: [{ key: 'k', operator: 'Exists', values: ['x'] }] }), [
      'values: Invalid value: []string{...}: values set must be empty for exists and does not exist',
    ]);
    assert.equal(labelSelectorErrors('x').length, 1);
    assert.equal(labelSelectorErrors({ matchExpressions: 'x' }).length, 1);
    assert.equal(labelSelectorErrors({ matchExpressions: [{ key: 'k', operator: 'In', values: [1] }] }).length, 1);
  });

  it('matches labels against requirements', () => {
    const labels = { app: 'web', tier: 'front' };
    assert.equal(labelSelectorMatches({}, labels), true);
    assert.equal(isEmptyLabelSelector({}), true);
    assert.equal(isEmptyLabelSelector({ matchLabels: { a: 'b' } }), false);
    assert.equal(labelSelectorMatches({ matchLabels: { app: 'web' } }, labels), true);
    assert.equal(labelSelectorMatches({ matchLabels: { app: 'db' } }, labels), false);
    assert.equal(
      labelSelectorMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'x'] }] }, labels),
      true,
    );
    assert.equal(
      labelSelectorMatches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, labels),
      false,
    );
    assert.equal(
      labelSelectorMatches({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels),
      true,
    );
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels), false);
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels), true);
    assert.equal(
      labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, labels),
      false,
    );
  });
});
