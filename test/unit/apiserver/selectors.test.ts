// emulator: the subject under test (unit tests of the emulator's own modules)
import assert from 'node:assert/strict';
import { ApiError } from '../../cluster/apiserver/errors.js';
import {
  labelSelectorObjectMatches,
  parseFieldSelector,
  parseLabelSelector,
} from '../../cluster/apiserver/selectors.js';

describe('apiserver label selectors', () => {
  const labels = { app: 'web', tier: 'front', version: '3' };

  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app in (db)', false],
    ['app notin (db, cache)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['tier', true],
    ['missing', false],
    ['!missing', true],
    ['!tier', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['version>2', true],
    ['version<3', false],
    ['  app = web , tier in ( front ) ', true],
  ];
  for (const [selector, expected] of cases) {
    it(`"${selector}" ${expected ? 'matches' : 'does not match'}`, () => {
      assert.equal(parseLabelSelector(selector).matches(labels), expected);
    });
  }

  it('treats absent labels as an empty map', () => {
    assert.equal(parseLabelSelector('!a').matches(undefined), true);
    assert.equal(parseLabelSelector('a').matches(undefined), false);
  });

  it('accepts an empty value (matching the empty label value)', () => {
    assert.equal(parseLabelSelector('app=').matches({ app: '' }), true);
    assert.equal(parseLabelSelector('app=').matches(labels), false);
  });

  for (const bad of ['app in ()', 'app in (a', 'app=web,', 'bad key=x', 'app=has space', 'a b', 'x>y']) {
    it(`rejects "${bad}" with 400 BadRequest`, () => {
      assert.throws(
        () => parseLabelSelector(bad),
        (err: unknown) =>
          err instanceof ApiError && err.code === 400 && /unable to parse requirement/.test(err.message),
      );
    });
  }

  it('evaluates metav1.LabelSelector objects', () => {
    assert.equal(labelSelectorObjectMatches({ matchLabels: { app: 'web' } }, labels), true);
    assert.equal(labelSelectorObjectMatches({ matchLabels: { app: 'db' } }, labels), false);
    assert.equal(
      labelSelectorObjectMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] }, labels),
      true,
    );
    assert.equal(
      labelSelectorObjectMatches({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels),
      false,
    );
    assert.equal(labelSelectorObjectMatches({}, labels), true);
  });
});

describe('apiserver field selectors', () => {
  const fields: Record<string, string> = { 'metadata.name': 'a,b', 'spec.nodeName': 'n1', 'status.phase': '' };
  const get = (f: string): string | undefined => fields[f];

  it('matches =, == and != and ANDs terms', () => {
    assert.equal(parseFieldSelector('spec.nodeName=n1').matches(get), true);
    assert.equal(parseFieldSelector('spec.nodeName==n1').matches(get), true);
    assert.equal(parseFieldSelector('spec.nodeName!=n1').matches(get), false);
    assert.equal(parseFieldSelector('spec.nodeName=n1,status.phase=').matches(get), true);
    assert.equal(parseFieldSelector('spec.nodeName=n1,status.phase=Running').matches(get), false);
  });

  it('unescapes \\, and \\= in values', () => {
    const sel = parseFieldSelector('metadata.name=a\\,b');
    assert.deepEqual(sel.requirements, [{ field: 'metadata.name', op: 'eq', value: 'a,b' }]);
    assert.equal(sel.matches(get), true);
  });

  it('compares an absent field as the empty string', () => {
    assert.equal(parseFieldSelector('spec.other=').matches(get), true);
    assert.equal(parseFieldSelector('spec.other!=x').matches(get), true);
  });

  it('rejects terms without an operator', () => {
    assert.throws(
      () => parseFieldSelector('spec.nodeName'),
      (err: unknown) => err instanceof ApiError && err.code === 400,
    );
    assert.throws(
      () => parseFieldSelector('=x'),
      (err: unknown) => err instanceof ApiError && err.code === 400,
    );
  });
});
