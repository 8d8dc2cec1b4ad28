// emulator: the subject under test (unit tests of the emulator's PATCH semantics, test/cluster/apiserver/patch)
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PatchError, applyJsonPatch, type JsonValue } from '../../cluster/apiserver/patch/index.js';
import { deepFreeze, jsonArb, keyArb } from './support.js';

function rejects(fn: () => unknown, code: number, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof PatchError, `expected a PatchError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('applyJsonPatch (RFC 6902)', () => {
  // RFC 6902 Appendix A, the examples that have a result.
  const examples: [string, JsonValue, JsonValue, JsonValue][] = [
    [
      'A.1 adding an object member',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux' }],
      { baz: 'qux', foo: 'bar' },
    ],
    [
      'A.2 adding an array element',
      { foo: ['bar', 'baz'] },
      [{ op: 'add', path: '/foo/1', value: 'qux' }],
      { foo: ['bar', 'qux', 'baz'] },
    ],
    ['A.3 removing an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [
      'A.4 removing an array element',
      { foo: ['bar', 'qux', 'baz'] },
      [{ op: 'remove', path: '/foo/1' }],
      { foo: ['bar', 'baz'] },
    ],
    [
      'A.5 replacing a value',
      { baz: 'qux', foo: 'bar' },
      [{ op: 'replace', path: '/baz', value: 'boo' }],
      { baz: 'boo', foo: 'bar' },
    ],
    [
      'A.6 moving a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 moving an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 testing a value: success',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'A.10 adding a nested member object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    [
      'A.11 ignoring unrecognized elements',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
      { foo: 'bar', baz: 'qux' },
    ],
    ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
    [
      'A.16 adding an array value',
      { foo: ['bar'] },
      [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      { foo: ['bar', ['abc', 'def']] },
    ],
  ];
  for (const [name, doc, patch, result] of examples) {
    it(name, () => assert.deepEqual(applyJsonPatch(deepFreeze(doc), deepFreeze(patch)), result));
  }

  it('A.9 testing a value: error', () => {
    rejects(
      () => applyJsonPatch({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]),
      422,
      'testing value /baz failed: test failed',
    );
  });

  it('A.12 adding to a nonexistent target', () => {
    rejects(
      () => applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]),
      422,
      'add operation does not apply: doc is missing path: "/baz/bat": missing value',
    );
  });

  it('A.15 comparing strings and numbers', () => {
    rejects(
      () => applyJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]),
      422,
      'testing value /~01 failed: test failed',
    );
  });

  it('applies the body of `kubectl patch --type json` to a NodeImage', () => {
    const live = deepFreeze({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'NodeImage',
      metadata: { name: 'n1', labels: { zone: 'a' } },
      spec: { images: { nginx: { tags: [{ tag: '1.24', version: 1 }] } } },
    });
    const body: JsonValue = [
      { op: 'test', path: '/metadata/labels/zone', value: 'a' },
      { op: 'replace', path: '/spec/images/nginx/tags/0/tag', value: '1.25' },
      { op: 'add', path: '/metadata/labels/kubernetes.io~1hostname', value: 'n1' },
      { op: 'remove', path: '/metadata/labels/zone' },
    ];
    assert.deepEqual(applyJsonPatch(live, body), {
      ...live,
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } },
      spec: { images: { nginx: { tags: [{ tag: '1.25', version: 1 }] } } },
    });
  });

  it('compares objects regardless of member order and numbers by value', () => {
    const doc = { a: { x: 1, y: [1, 2] } };
    assert.deepEqual(applyJsonPatch(doc, [{ op: 'test', path: '/a', value: { y: [1, 2.0], x: 1.0 } }]), doc);
  });

  it('copies deeply: changing the copy does not change the source', () => {
    const result = applyJsonPatch({ a: { b: [1] } }, [
      { op: 'copy', from: '/a', path: '/c' },
      { op: 'add', path: '/c/b/-', value: 2 },
    ]);
    assert.deepEqual(result, { a: { b: [1] }, c: { b: [1, 2] } });
  });

  it('works on the whole document with the empty pointer', () => {
    assert.deepEqual(
      applyJsonPatch({ a: 1 }, [
        { op: 'test', path: '', value: { a: 1 } },
        { op: 'replace', path: '', value: { b: 2 } },
      ]),
      { b: 2 },
    );
    assert.deepEqual(applyJsonPatch({ a: 1 }, [{ op: 'copy', from: '', path: '/self' }]), { a: 1, self: { a: 1 } });
  });

  it('is all or nothing and never modifies its input', () => {
    const doc = deepFreeze({ a: { b: 1 }, list: [1, 2] });
    rejects(
      () =>
        applyJsonPatch(doc, [
          { op: 'add', path: '/a/c', value: 2 },
          { op: 'remove', path: '/list/0' },
          { op: 'replace', path: '/a/missing', value: 3 },
        ]),
      422,
      'replace operation does not apply: doc is missing key: /a/missing: missing value',
    );
    assert.deepEqual(doc, { a: { b: 1 }, list: [1, 2] });
  });

  it('writes __proto__ as a member', () => {
    const result = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as object;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__']);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  describe('errors', () => {
    const cases: [string, JsonValue, JsonValue, number, string | RegExp][] = [
      ['a body that is no array', { a: 1 }, { op: 'add', path: '/a', value: 1 }, 400, /must be an array of operations/],
      ['an operation that is no object', { a: 1 }, ['add'], 400, /operation 0 must be an object/],
      ['an unknown op', { a: 1 }, [{ op: 'merge', path: '/a' }], 422, /^Unexpected kind: "merge"/],
      ['a missing op', { a: 1 }, [{ path: '/a' }], 422, /^Unexpected kind: missing/],
      ['a missing path', { a: 1 }, [{ op: 'remove' }], 422, 'remove operation 0: missing path field'],
      [
        'a path that is no string',
        { a: 1 },
        [{ op: 'remove', path: 3 }],
        422,
        'remove operation 0: path must be a string, got a number',
      ],
      ['a missing from', { a: 1 }, [{ op: 'move', path: '/b' }], 422, 'move operation 0: missing from field'],
      ['a missing value', { a: 1 }, [{ op: 'add', path: '/b' }], 422, 'add operation 0 (path /b): missing value field'],
      ['a pointer without a leading slash', { a: 1 }, [{ op: 'remove', path: 'a' }], 422, /invalid JSON pointer "a"/],
      ['a bad ~ escape', { a: 1 }, [{ op: 'remove', path: '/a~2' }], 422, /"~" must be followed by "0" or "1"/],
      [
        'removing a member that is not there',
        { a: 1 },
        [{ op: 'remove', path: '/b' }],
        422,
        "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value",
      ],
      [
        'removing below a missing member',
        { a: 1 },
        [{ op: 'remove', path: '/b/c' }],
        422,
        'remove operation does not apply: doc is missing path: "/b/c": missing value',
      ],
      [
        'replacing below a missing member',
        { a: 1 },
        [{ op: 'replace', path: '/spec/x', value: 1 }],
        422,
        'replace operation does not apply: doc is missing path: /spec/x: missing value',
      ],
      [
        'adding past the end of an array',
        { a: [1] },
        [{ op: 'add', path: '/a/2', value: 1 }],
        422,
        "error in add for path: '/a/2': Unable to access invalid index: 2: invalid index referenced",
      ],
      [
        'an index with a leading zero',
        { a: [1, 2] },
        [{ op: 'replace', path: '/a/01', value: 1 }],
        422,
        /Unable to access invalid index: 01/,
      ],
      ['"-" outside add', { a: [1] }, [{ op: 'remove', path: '/a/-' }], 422, /Unable to access invalid index: -/],
      [
        'a member of a string',
        { a: 'x' },
        [{ op: 'add', path: '/a/b', value: 1 }],
        422,
        /doc is missing path: "\/a\/b"/,
      ],
      [
        'moving from a missing path',
        { a: 1 },
        [{ op: 'move', from: '/x', path: '/y' }],
        422,
        'move operation does not apply: doc is missing from path: /x: missing value',
      ],
      [
        'moving into its own child',
        { a: { b: 1 } },
        [{ op: 'move', from: '/a', path: '/a/b/c' }],
        422,
        /from \/a is a proper prefix of path \/a\/b\/c/,
      ],
      [
        'copying from a missing path',
        { a: 1 },
        [{ op: 'copy', from: '/x', path: '/y' }],
        422,
        'copy operation does not apply: doc is missing from path: /x: missing value',
      ],
      [
        'testing a missing path',
        { a: 1 },
        [{ op: 'test', path: '/x', value: null }],
        422,
        'test operation does not apply: is missing path: /x: missing value',
      ],
      ['removing the whole document', { a: 1 }, [{ op: 'remove', path: '' }], 422, /cannot remove the whole document/],
    ];
    for (const [name, doc, ops, code, message] of cases) {
      it(`rejects ${name} with ${code}`, () =>
        rejects(() => applyJsonPatch(deepFreeze(doc), deepFreeze(ops)), code, message));
    }
  });

  describe('properties', () => {
    const escape = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

    it('add then test at an escaped pointer finds the value under the original key', () => {
      fc.assert(
        fc.property(
          jsonArb({ nullMembers: true, arrays: true }),
          keyArb,
          jsonArb({ nullMembers: true, arrays: true }),
          (doc, key, value) => {
            const base = { root: deepFreeze(doc) };
            const path = `/root/${escape(key)}`;
            const ops = [
              { op: 'replace', path: '/root', value: {} },
              { op: 'add', path, value },
              { op: 'test', path, value },
            ];
            const result = applyJsonPatch(base, ops) as { root: Record<string, JsonValue> };
            assert.deepEqual(Object.getOwnPropertyDescriptor(result.root, key)?.value, value);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('replace of the whole document gives the value, and test of it then succeeds', () => {
      fc.assert(
        fc.property(
          jsonArb({ nullMembers: true, arrays: true }),
          jsonArb({ nullMembers: true, arrays: true }),
          (a, b) => {
            const result = applyJsonPatch(deepFreeze(a), [
              { op: 'replace', path: '', value: b },
              { op: 'test', path: '', value: b },
            ]);
            assert.deepEqual(result, b);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('moving a member away and back restores the document', () => {
      fc.assert(
        fc.property(jsonArb({ nullMembers: false, arrays: true }), keyArb, (value, key) => {
          const doc = deepFreeze({ src: Object.defineProperty({}, key, { value, enumerable: true }), dst: {} });
          const from = `/src/${escape(key)}`;
          const to = `/dst/${escape(key)}`;
          const result = applyJsonPatch(doc, [
            { op: 'move', from, path: to },
            { op: 'move', from: to, path: from },
          ]);
          assert.deepEqual(result, doc);
        }),
        { numRuns: 200 },
      );
    });
  });
});
