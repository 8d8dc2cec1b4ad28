// emulator: the subject under test (unit tests of the emulator's PATCH semantics, test/cluster/apiserver/patch)
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMergePatch, jsonMergePatch, type JsonValue } from '../../cluster/apiserver/patch/index.js';
import { deepFreeze, jsonArb } from './support.js';

describe('jsonMergePatch (RFC 7386)', () => {
  // RFC 7386 Appendix A, every row.
  const appendixA: [JsonValue, JsonValue, JsonValue][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  appendixA.forEach(([target, patch, result], i) => {
    it(`Appendix A row ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      assert.deepEqual(jsonMergePatch(deepFreeze(target), deepFreeze(patch)), result);
    });
  });

  it('applies the RFC 7386 section 3 example', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    assert.deepEqual(jsonMergePatch(deepFreeze(target), deepFreeze(patch)), {
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('applies the body kubectl sends for a second apply of a custom resource', () => {
    const live = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'NodeImage',
      metadata: {
        name: 'n1',
        resourceVersion: '7',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'old\n' },
      },
      spec: { images: { nginx: { tags: [{ tag: '1.24' }] } } },
      status: { desired: 1 },
    };
    const body = {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'new\n' } },
      spec: { images: { nginx: { tags: [{ tag: '1.25' }] }, busybox: { tags: [{ tag: '1.36' }] } } },
    };
    const result = jsonMergePatch(deepFreeze(live), deepFreeze(body));
    assert.deepEqual(result, {
      ...live,
      metadata: { ...live.metadata, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'new\n' } },
      spec: { images: { nginx: { tags: [{ tag: '1.25' }] }, busybox: { tags: [{ tag: '1.36' }] } } },
    });
  });

  it('writes __proto__ as a member and leaves the prototype alone', () => {
    const patch = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as JsonValue;
    const result = jsonMergePatch({}, patch) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(result, '__proto__')?.value, { polluted: true });
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('returns a result that shares nothing with its inputs', () => {
    const target = deepFreeze({ a: { b: [1, { c: 2 }] }, d: { e: 1 } });
    const patch = deepFreeze({ d: { f: { g: 1 } } });
    const result = jsonMergePatch(target, patch) as any;
    result.a.b[1].c = 3; // would throw if it were the frozen input
    result.d.f.g = 2;
    assert.deepEqual(target, { a: { b: [1, { c: 2 }] }, d: { e: 1 } });
    assert.deepEqual(patch, { d: { f: { g: 1 } } });
  });

  describe('properties', () => {
    it('merge patch of diff(a, b) applied to a gives b (b without null members)', () => {
      fc.assert(
        fc.property(
          jsonArb({ nullMembers: true, arrays: true }),
          jsonArb({ nullMembers: false, arrays: true }),
          (a, b) => {
            deepFreeze(a);
            deepFreeze(b);
            assert.deepEqual(jsonMergePatch(a, createMergePatch(a, b)), b);
          },
        ),
        { numRuns: 300 },
      );
    });

    it('is idempotent: applying a patch twice equals applying it once', () => {
      fc.assert(
        fc.property(
          jsonArb({ nullMembers: true, arrays: true }),
          jsonArb({ nullMembers: true, arrays: true }),
          (a, p) => {
            const once = jsonMergePatch(deepFreeze(a), deepFreeze(p));
            assert.deepEqual(jsonMergePatch(once, p), once);
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
