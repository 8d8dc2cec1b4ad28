// emulator: the subject under test (unit tests of the emulator's CRD schema code, test/cluster/apiserver/schema)
import assert from 'node:assert/strict';
import { applyStructuralSchema, type JSONSchemaProps } from '../../cluster/apiserver/schema/index.js';

/** A root schema whose spec is `spec`. */
function root(spec: JSONSchemaProps, extra: Record<string, JSONSchemaProps> = {}): JSONSchemaProps {
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec,
      ...extra,
    },
  };
}

function obj(spec: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' }, spec, ...extra };
}

function specOf(result: { object: unknown }): unknown {
  return (result.object as { spec?: unknown }).spec;
}

describe('applyStructuralSchema: pruning', () => {
  const schema = root({
    type: 'object',
    properties: {
      known: { type: 'string' },
      list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
      map: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'integer' } } } },
      free: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        properties: { inner: { type: 'object', properties: { x: { type: 'string' } } } },
      },
      anything: { type: 'object', additionalProperties: true },
      embedded: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } },
      },
    },
  });

  it('drops unknown fields everywhere the schema specifies the structure, and says which', () => {
    const input = obj({
      known: 'k',
      unknown: 1,
      list: [{ a: 'x', b: 'y' }],
      map: { one: { v: 1, w: 2 } },
      free: { whatever: { deep: true }, inner: { x: 'x', y: 'y' } },
      anything: { a: { b: 1 } },
      embedded: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', labels: { a: 'b' }, bogus: 1 },
        spec: { replicas: 1, paused: true },
        status: {},
      },
    });
    const before = structuredClone(input);
    const result = applyStructuralSchema(schema, input);
    assert.deepEqual(input, before, 'the input is not modified');
    assert.deepEqual(specOf(result), {
      known: 'k',
      list: [{ a: 'x' }],
      map: { one: { v: 1 } },
      free: { whatever: { deep: true }, inner: { x: 'x' } },
      anything: { a: { b: 1 } },
      embedded: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', labels: { a: 'b' } },
        spec: { replicas: 1 },
      },
    });
    assert.deepEqual(result.unknownFields.sort(), [
      'spec.embedded.metadata.bogus',
      'spec.embedded.spec.paused',
      'spec.embedded.status',
      'spec.free.inner.y',
      'spec.list[0].b',
      'spec.map[one].w',
      'spec.unknown',
    ]);
    assert.deepEqual(result.errors, []);
  });

  it('keeps apiVersion, kind and the whole root metadata even when the schema omits them', () => {
    const bare: JSONSchemaProps = { type: 'object', properties: { spec: { type: 'object' } } };
    const input = { apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 'n', custom: 1 }, spec: { a: 1 }, top: 1 };
    const result = applyStructuralSchema(bare, input);
    assert.deepEqual(result.object, {
      apiVersion: 'x.io/v1',
      kind: 'Thing',
      metadata: { name: 'n', custom: 1 },
      spec: {},
    });
    assert.deepEqual(result.unknownFields.sort(), ['spec.a', 'top']);
  });

  it('drops nulls of non-nullable fields without default, keeps nullable nulls', () => {
    const s = root({
      type: 'object',
      required: ['needed'],
      properties: { needed: { type: 'string' }, gone: { type: 'string' }, kept: { type: 'string', nullable: true } },
    });
    const result = applyStructuralSchema(s, obj({ needed: null, gone: null, kept: null }));
    assert.deepEqual(specOf(result), { kept: null });
    assert.deepEqual(result.errors, [{ field: 'spec.needed', type: 'FieldValueRequired', message: 'Required value' }]);
  });

  it('treats field names like constructor and __proto__ as plain data', () => {
    const s = root({ type: 'object', properties: { name: { type: 'string' } } });
    const input = JSON.parse('{"spec":{"constructor":1,"__proto__":{"polluted":true},"name":"n"}}') as unknown;
    const result = applyStructuralSchema(s, input);
    assert.deepEqual(specOf(result), { name: 'n' });
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('applyStructuralSchema: defaulting', () => {
  const schema = root({
    type: 'object',
    properties: {
      policy: {
        type: 'object',
        default: {},
        properties: { timeout: { type: 'integer', default: 600 }, retries: { type: 'integer', default: 3 } },
      },
      mode: { type: 'string', default: 'Always' },
      tags: {
        type: 'array',
        items: {
          type: 'object',
          properties: { tag: { type: 'string' }, pull: { type: 'string', default: 'IfNotPresent' } },
        },
      },
      images: {
        type: 'object',
        additionalProperties: { type: 'object', properties: { count: { type: 'integer', default: 1 } } },
      },
      nullable: { type: 'string', nullable: true, default: 'd' },
      replaced: { type: 'string', default: 'r' },
    },
  });

  it('fills missing fields, nested ones, list items and map values, before validation', () => {
    const result = applyStructuralSchema(
      schema,
      obj({
        tags: [{ tag: 'a' }, { tag: 'b', pull: 'Always' }],
        images: { x: {}, y: { count: 5 } },
        nullable: null,
        replaced: null,
      }),
    );
    assert.deepEqual(specOf(result), {
      policy: { timeout: 600, retries: 3 },
      mode: 'Always',
      tags: [
        { tag: 'a', pull: 'IfNotPresent' },
        { tag: 'b', pull: 'Always' },
      ],
      images: { x: { count: 1 }, y: { count: 5 } },
      nullable: null,
      replaced: 'r',
    });
    assert.deepEqual(result.errors, []);
  });

  it('keeps given values and never shares the default object between results', () => {
    const first = applyStructuralSchema(schema, obj({ policy: { timeout: 5 }, mode: 'Never' }));
    assert.deepEqual((specOf(first) as { policy: unknown }).policy, { timeout: 5, retries: 3 });
    assert.equal((specOf(first) as { mode: unknown }).mode, 'Never');
    const a = specOf(applyStructuralSchema(schema, obj({}))) as { policy: { timeout: number } };
    a.policy.timeout = 1;
    const b = specOf(applyStructuralSchema(schema, obj({}))) as { policy: { timeout: number } };
    assert.equal(b.policy.timeout, 600);
    assert.deepEqual(schema.properties?.['spec']?.properties?.['policy']?.default, {});
  });

  it('lets a default satisfy required', () => {
    const s = root({ type: 'object', required: ['policy'], properties: { policy: { type: 'object', default: {} } } });
    assert.deepEqual(applyStructuralSchema(s, obj({})).errors, []);
  });
});

describe('applyStructuralSchema: ratcheting on update', () => {
  const schema = root({
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, size: { type: 'integer', maximum: 10 }, other: { type: 'string' } },
  });

  it('ignores errors on values that did not change, reports changed ones', () => {
    const old = obj({ size: 50 });
    const unchanged = applyStructuralSchema(schema, obj({ size: 50 }), { mode: 'update', oldObject: old });
    assert.deepEqual(unchanged.errors, []);
    // A missing required field is judged on its parent: spec changed, so it is reported; size did not.
    const sibling = applyStructuralSchema(schema, obj({ size: 50, other: 'x' }), { mode: 'update', oldObject: old });
    assert.deepEqual(
      sibling.errors.map((e) => e.field),
      ['spec.name'],
    );
    const changed = applyStructuralSchema(schema, obj({ size: 60, name: 'n' }), { mode: 'update', oldObject: old });
    assert.deepEqual(
      changed.errors.map((e) => e.field),
      ['spec.size'],
    );
    const created = applyStructuralSchema(schema, obj({ size: 50 }));
    assert.deepEqual(created.errors.map((e) => e.field).sort(), ['spec.name', 'spec.size']);
  });
});

describe('applyStructuralSchema: bad input', () => {
  it('reports a non-object body instead of throwing', () => {
    for (const input of [null, 'x', 3, [1]]) {
      const result = applyStructuralSchema(root({ type: 'object' }), input);
      assert.equal(result.errors.length, 1);
      assert.equal(result.errors[0]?.type, 'FieldValueTypeInvalid');
      assert.equal(result.errors[0]?.field, '<nil>');
    }
  });
});
