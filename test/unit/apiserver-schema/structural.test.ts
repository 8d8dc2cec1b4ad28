// emulator: the subject under test (unit tests of the emulator's CRD schema code, test/cluster/apiserver/schema)
import assert from 'node:assert/strict';
import { checkStructural, checkStructuralErrors, type JSONSchemaProps } from '../../cluster/apiserver/schema/index.js';

function rootWith(spec: unknown, extra: Record<string, unknown> = {}): JSONSchemaProps {
  return { type: 'object', properties: { spec: spec as JSONSchemaProps }, ...extra };
}

describe('checkStructural', () => {
  it('accepts a structural schema with the usual extensions', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } },
        spec: {
          type: 'object',
          required: ['image'],
          properties: {
            image: { type: 'string', pattern: '^[a-z]' },
            parallelism: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            port: {
              'x-kubernetes-int-or-string': true,
              allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^\\d' }],
            },
            raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            anything: { 'x-kubernetes-preserve-unknown-fields': true },
            template: {
              type: 'object',
              'x-kubernetes-embedded-resource': true,
              'x-kubernetes-preserve-unknown-fields': true,
            },
            labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
            },
            policy: { type: 'object', default: {}, properties: { timeout: { type: 'integer', default: 600 } } },
            choice: {
              type: 'object',
              properties: { a: { type: 'string' }, b: { type: 'string' } },
              oneOf: [{ required: ['a'] }, { required: ['b'] }],
            },
            checked: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0' }] },
          },
        },
      },
    };
    assert.deepEqual(checkStructural(schema), []);
  });

  it('requires a type on the root, on fields and on items', () => {
    assert.deepEqual(checkStructural({ properties: { spec: { type: 'object' } } }), [
      'type: Required value: must not be empty at the root',
    ]);
    assert.deepEqual(checkStructural(rootWith({ properties: {} })), [
      'properties[spec].type: Required value: must not be empty for specified object fields',
    ]);
    assert.deepEqual(checkStructural(rootWith({ type: 'array', items: {} })), [
      'properties[spec].items.type: Required value: must not be empty for specified array items',
    ]);
    assert.deepEqual(checkStructural(rootWith({ type: 'array' })), [
      'properties[spec].items: Required value: must be specified',
    ]);
    assert.deepEqual(checkStructural({ type: 'string' }), [
      'type: Invalid value: "string": must be object at the root',
    ]);
  });

  it('prefixes paths with basePath', () => {
    assert.deepEqual(checkStructural(rootWith({}), 'spec.versions[0].schema.openAPIV3Schema'), [
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ]);
  });

  it('forbids generic fields inside logical junctors, except the int-or-string patterns', () => {
    const problems = checkStructural(
      rootWith({
        type: 'object',
        properties: { a: { type: 'string' } },
        anyOf: [{ type: 'object', description: 'd', properties: { a: { default: 'x', nullable: true } } }],
      }),
    );
    assert.deepEqual(problems, [
      'properties[spec].anyOf[0].description: Forbidden: must be empty to be structural',
      'properties[spec].anyOf[0].properties[a].default: Forbidden: must be undefined to be structural',
      'properties[spec].anyOf[0].properties[a].nullable: Forbidden: must be false to be structural',
      'properties[spec].anyOf[0].type: Forbidden: must be empty to be structural',
    ]);
    assert.deepEqual(
      checkStructural(rootWith({ type: 'string', anyOf: [{ type: 'integer' }, { type: 'string' }] })),
      [
        'properties[spec].anyOf[0].type: Forbidden: must be empty to be structural',
        'properties[spec].anyOf[1].type: Forbidden: must be empty to be structural',
      ],
      'the int-or-string anyOf is only allowed with x-kubernetes-int-or-string',
    );
  });

  it('requires fields named in junctors to be specified outside them', () => {
    assert.deepEqual(
      checkStructural(
        rootWith({
          type: 'object',
          properties: { a: { type: 'string' } },
          oneOf: [{ properties: { b: { minLength: 1 } } }],
        }),
      ),
      [
        'properties[spec].properties[b]: Required value: because it is defined in properties[spec].oneOf[0].properties[b]',
      ],
    );
  });

  it('restricts metadata to name and generateName', () => {
    assert.deepEqual(
      checkStructural({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      }),
      [
        'properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
      ],
    );
    assert.deepEqual(
      checkStructural({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: 'n' } } } },
      }),
      ['properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata'],
    );
    assert.deepEqual(checkStructural({ type: 'object', properties: { kind: { type: 'integer' } } }), [
      'properties[kind].type: Invalid value: "integer": must be string',
    ]);
  });

  it('reports what apiextensions rejects outright', () => {
    const cases: [JSONSchemaProps, string][] = [
      [{ type: 'string', $ref: '#/definitions/x' }, 'properties[spec].$ref: Forbidden: $ref is not supported'],
      [
        { type: 'array', items: { type: 'string' }, uniqueItems: true },
        'properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ],
      [
        { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
        'properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive',
      ],
      [
        { type: 'null' },
        'properties[spec].type: Forbidden: type cannot be set to null, use nullable as an alternative',
      ],
      [
        { type: 'text' },
        'properties[spec].type: Unsupported value: "text": supported values: "array", "boolean", "integer", "number", "object", "string"',
      ],
      [
        { type: 'string', pattern: '([' },
        'properties[spec].pattern: Invalid value: "([": must be a valid regular expression',
      ],
      [
        { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
        'properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined',
      ],
      [
        { type: 'string', 'x-kubernetes-list-type': 'set' },
        'properties[spec].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified',
      ],
      [
        { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'map' },
        'properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map',
      ],
      [
        {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' } } },
        },
        'properties[spec].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
      ],
      [
        { type: 'object', 'x-kubernetes-embedded-resource': true },
        'properties[spec].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ],
      [
        { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true },
        'properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true',
      ],
      [
        { type: 'integer', 'x-kubernetes-validations': [{ rule: ' ' }] },
        'properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified',
      ],
    ];
    for (const [spec, problem] of cases) {
      assert.deepEqual(checkStructural(rootWith(spec)), [problem], JSON.stringify(spec));
    }
    assert.deepEqual(checkStructural({ type: 'object', additionalProperties: { type: 'string' } }), [
      'additionalProperties: Forbidden: must not be used at the root',
    ]);
  });

  it('checks that defaults validate and survive pruning', () => {
    assert.deepEqual(checkStructural(rootWith({ type: 'integer', default: 'x' })), [
      'properties[spec].default: Invalid value: "string": in body must be of type integer: "string"',
    ]);
    assert.deepEqual(checkStructural(rootWith({ type: 'string', enum: ['a'], default: 'b' })), [
      'properties[spec].default: Unsupported value: "b": supported values: "a"',
    ]);
    assert.deepEqual(
      checkStructural(rootWith({ type: 'object', properties: { a: { type: 'string' } }, default: { b: 1 } })),
      ['properties[spec].default: Invalid value: map[string]interface {}{"b":1}: must not have unknown fields: b'],
    );
  });

  it('does not throw on garbage', () => {
    assert.equal(checkStructural(null).length, 1);
    assert.equal(checkStructural('x').length, 1);
    assert.ok(checkStructural(rootWith({ type: 'object', properties: { a: 5 } })).length > 0);
  });
});

describe('checkStructuralErrors', () => {
  it('gives the same problems as typed field errors', () => {
    assert.deepEqual(
      checkStructuralErrors({ type: 'object', properties: { spec: {} } }, 'spec.versions[0].schema.openAPIV3Schema'),
      [
        {
          field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].type',
          type: 'FieldValueRequired',
          message: 'Required value: must not be empty for specified object fields',
          detail: 'must not be empty for specified object fields',
        },
      ],
    );
  });
});
