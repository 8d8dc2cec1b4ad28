// emulator: the subject under test (unit tests of the emulator's CRD schema code, test/cluster/apiserver/schema)
import assert from 'node:assert/strict';
import { applyStructuralSchema, type FieldError, type JSONSchemaProps } from '../../cluster/apiserver/schema/index.js';

/** Errors for `spec: { x: value }` where x has schema `x`. */
function errorsFor(x: JSONSchemaProps, value: unknown): FieldError[] {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { x } } },
  };
  return applyStructuralSchema(schema, { spec: { x: value } }).errors;
}

/** The one error, as `field: message`. */
function one(x: JSONSchemaProps, value: unknown): string {
  const errors = errorsFor(x, value);
  assert.equal(errors.length, 1, JSON.stringify(errors));
  return `${errors[0]!.field}: ${errors[0]!.message}`;
}

function ok(x: JSONSchemaProps, ...values: unknown[]): void {
  for (const value of values) assert.deepEqual(errorsFor(x, value), [], JSON.stringify(value));
}

describe('schema validation messages (as kube-apiserver prints them)', () => {
  it('type, with integer distinct from number', () => {
    assert.equal(
      one({ type: 'integer' }, 'string'),
      'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"',
    );
    assert.equal(
      one({ type: 'integer' }, 1.5),
      'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"',
    );
    assert.equal(
      one({ type: 'string' }, { a: 1 }),
      'spec.x: Invalid value: "object": spec.x in body must be of type string: "object"',
    );
    assert.equal(
      one({ type: 'object' }, [1]),
      'spec.x: Invalid value: "array": spec.x in body must be of type object: "array"',
    );
    assert.equal(
      one({ type: 'boolean' }, 'true'),
      'spec.x: Invalid value: "string": spec.x in body must be of type boolean: "string"',
    );
    ok({ type: 'number' }, 1, 1.5, -3);
    ok({ type: 'integer' }, 0, -7, 2 ** 40);
    const [error] = errorsFor({ type: 'integer' }, 'string');
    assert.deepEqual(error, {
      field: 'spec.x',
      type: 'FieldValueTypeInvalid',
      message: 'Invalid value: "string": spec.x in body must be of type integer: "string"',
      detail: 'spec.x in body must be of type integer: "string"',
    });
  });

  it('x-kubernetes-int-or-string', () => {
    const intOrString: JSONSchemaProps = {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    };
    ok(intOrString, 3, '3', '50%');
    assert.equal(
      one(intOrString, true),
      'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"',
    );
    assert.match(one(intOrString, 1.5), /must be of type integer,string: "number"/);
  });

  it('nullable', () => {
    ok({ type: 'string', nullable: true }, null);
    const list: JSONSchemaProps = { type: 'array', items: { type: 'string' } };
    assert.equal(
      one(list, ['a', null]),
      'spec.x[1]: Invalid value: "null": spec.x[1] in body must be of type string: "null"',
    );
    ok({ type: 'array', items: { type: 'string', nullable: true } }, ['a', null]);
  });

  it('required', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      required: ['a', 'b'],
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    };
    const errors = errorsFor(schema, { a: 'x' });
    assert.deepEqual(errors, [{ field: 'spec.x.b', type: 'FieldValueRequired', message: 'Required value' }]);
  });

  it('enum', () => {
    assert.equal(
      one({ type: 'string', enum: ['a', 'b'] }, 'x'),
      'spec.x: Unsupported value: "x": supported values: "a", "b"',
    );
    assert.equal(one({ type: 'integer', enum: [1, 2] }, 3), 'spec.x: Unsupported value: 3: supported values: "1", "2"');
    assert.equal(errorsFor({ type: 'string', enum: ['a'] }, 'x')[0]?.type, 'FieldValueNotSupported');
    ok({ type: 'string', enum: ['', 'a'] }, '', 'a');
  });

  it('format', () => {
    assert.equal(
      one({ type: 'string', format: 'date-time' }, 'yesterday'),
      'spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time: "yesterday"',
    );
    ok({ type: 'string', format: 'date-time' }, '2024-05-01T10:00:00Z', '2024-05-01T10:00:00.123456789+02:00');
    assert.match(one({ type: 'string', format: 'date-time' }, '2024-02-30T10:00:00Z'), /must be of type date-time/);
    ok({ type: 'string', format: 'date' }, '2024-02-29');
    ok({ type: 'string', format: 'byte' }, 'aGVsbG8=', '');
    assert.match(one({ type: 'string', format: 'byte' }, 'not base64!'), /must be of type byte/);
    ok({ type: 'integer', format: 'int32' }, 2147483647, -2147483648);
    assert.equal(
      one({ type: 'integer', format: 'int32' }, 2147483648),
      'spec.x: Invalid value: 2147483648: spec.x in body must be of type int32: "2147483648"',
    );
    ok({ type: 'integer', format: 'int64' }, 9007199254740991);
    ok({ type: 'string', format: 'uuid' }, '123e4567-e89b-12d3-a456-426614174000');
    ok({ type: 'string', format: 'ipv4' }, '10.0.0.1');
    assert.match(one({ type: 'string', format: 'ipv4' }, '10.0.0.256'), /must be of type ipv4/);
    ok({ type: 'string', format: 'ipv6' }, 'fd00::1');
    ok({ type: 'string', format: 'cidr' }, '10.0.0.0/8', 'fd00::/64');
    assert.match(one({ type: 'string', format: 'cidr' }, '10.0.0.0/33'), /must be of type cidr/);
    ok({ type: 'string', format: 'hostname' }, 'node-1.example.com');
    ok({ type: 'string', format: 'duration' }, '1h30m', '500ms');
    ok({ type: 'string', format: 'some-unknown-format' }, 'anything');
  });

  it('string length and pattern', () => {
    assert.equal(one({ type: 'string', maxLength: 3 }, 'abcd'), 'spec.x: Too long: may not be longer than 3');
    assert.equal(errorsFor({ type: 'string', maxLength: 3 }, 'abcd')[0]?.type, 'FieldValueTooLong');
    ok({ type: 'string', maxLength: 3 }, 'abc', 'äöü');
    assert.equal(
      one({ type: 'string', minLength: 2 }, 'a'),
      'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long',
    );
    assert.equal(
      one({ type: 'string', pattern: '^a+$' }, 'bbb'),
      `spec.x: Invalid value: "bbb": spec.x in body should match '^a+$'`,
    );
    ok({ type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }, 'node-1');
  });

  it('numeric bounds', () => {
    assert.equal(
      one({ type: 'integer', minimum: 1 }, 0),
      'spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1',
    );
    assert.equal(
      one({ type: 'integer', minimum: 1, exclusiveMinimum: true }, 1),
      'spec.x: Invalid value: 1: spec.x in body should be greater than 1',
    );
    assert.equal(
      one({ type: 'number', maximum: 1.5 }, 2.25),
      'spec.x: Invalid value: 2.25: spec.x in body should be less than or equal to 1.5',
    );
    assert.equal(
      one({ type: 'integer', maximum: 10, exclusiveMaximum: true }, 10),
      'spec.x: Invalid value: 10: spec.x in body should be less than 10',
    );
    assert.equal(
      one({ type: 'integer', multipleOf: 5 }, 7),
      'spec.x: Invalid value: 7: spec.x in body should be a multiple of 5',
    );
    ok({ type: 'number', multipleOf: 0.1 }, 0.3);
  });

  it('item and property counts, uniqueItems', () => {
    assert.equal(
      one({ type: 'array', items: { type: 'string' }, minItems: 2 }, ['a']),
      'spec.x: Invalid value: []interface {}{"a"}: spec.x in body should have at least 2 items',
    );
    assert.equal(
      one({ type: 'array', items: { type: 'integer' }, maxItems: 2 }, [1, 2, 3]),
      'spec.x: Too many: 3: must have at most 2 items',
    );
    assert.equal(
      errorsFor({ type: 'array', items: { type: 'integer' }, maxItems: 2 }, [1, 2, 3])[0]?.type,
      'FieldValueTooMany',
    );
    assert.equal(
      one({ type: 'array', items: { type: 'integer' }, uniqueItems: true }, [1, 2, 1]),
      `spec.x: Invalid value: []interface {}{1, 2, 1}: spec.x in body shouldn't contain duplicates`,
    );
    const map: JSONSchemaProps = { type: 'object', additionalProperties: { type: 'string' } };
    assert.equal(
      one({ ...map, minProperties: 2 }, { a: 'b' }),
      'spec.x: Invalid value: map[string]interface {}{"a":"b"}: spec.x in body should have at least 2 properties',
    );
    assert.equal(
      one({ ...map, maxProperties: 1 }, { a: 'b', c: 'd' }),
      'spec.x: Too many: 2: must have at most 1 items',
    );
  });

  it('additionalProperties: values validated with map-key paths', () => {
    const data: JSONSchemaProps = { type: 'object', additionalProperties: { type: 'string' } };
    assert.equal(
      one(data, { 'bad key': 1, good: 'v' }),
      'spec.x[bad key]: Invalid value: "integer": spec.x[bad key] in body must be of type string: "integer"',
    );
    const nested: JSONSchemaProps = {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: {
          tags: {
            type: 'array',
            items: { type: 'object', required: ['tag'], properties: { tag: { type: 'string' } } },
          },
        },
      },
    };
    assert.equal(one(nested, { nginx: { tags: [{ tag: 'a' }, {}] } }), 'spec.x[nginx].tags[1].tag: Required value');
  });

  it('x-kubernetes-list-type set and map uniqueness', () => {
    const set: JSONSchemaProps = { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } };
    assert.equal(one(set, ['a', 'b', 'a']), 'spec.x[2]: Duplicate value: "a"');
    assert.equal(errorsFor(set, ['a', 'a'])[0]?.type, 'FieldValueDuplicate');
    ok(set, ['a', 'b']);
    const map: JSONSchemaProps = {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name', 'protocol'],
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          protocol: { type: 'string', default: 'TCP' },
          port: { type: 'integer' },
        },
      },
    };
    assert.equal(
      one(map, [
        { name: 'a', port: 1 },
        { name: 'a', protocol: 'UDP', port: 1 },
        { name: 'a', protocol: 'TCP', port: 2 },
      ]),
      'spec.x[2]: Duplicate value: map[string]interface {}{"name":"a", "protocol":"TCP"}',
    );
    ok(map, [{ name: 'a' }, { name: 'b' }]);
    const atomic: JSONSchemaProps = { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string' } };
    ok(atomic, ['a', 'a']);
  });

  it('x-kubernetes-embedded-resource needs apiVersion and kind', () => {
    const embedded: JSONSchemaProps = {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    };
    assert.deepEqual(
      errorsFor(embedded, { metadata: { name: 'x' } }).map((e) => `${e.field}: ${e.message}`),
      ['spec.x.apiVersion: Required value: must not be empty', 'spec.x.kind: Required value: must not be empty'],
    );
    ok(embedded, { apiVersion: 'v1', kind: 'Pod', spec: { anything: true } });
  });

  it('allOf, anyOf, oneOf, not', () => {
    assert.equal(
      one({ type: 'integer', allOf: [{ minimum: 1 }, { maximum: 5 }] }, 9),
      'spec.x: Invalid value: 9: spec.x in body should be less than or equal to 5',
    );
    const anyOf: JSONSchemaProps = { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] };
    ok(anyOf, 'apple', 'banana');
    assert.equal(
      one(anyOf, 'cherry'),
      'spec.x: Invalid value: "cherry": spec.x in body must validate at least one schema (anyOf)',
    );
    const oneOf: JSONSchemaProps = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
      oneOf: [{ required: ['a'] }, { required: ['b'] }],
    };
    ok(oneOf, { a: 'x' }, { b: 'y' });
    assert.match(one(oneOf, { a: 'x', b: 'y' }), /must validate one and only one schema \(oneOf\)/);
    assert.match(one(oneOf, {}), /must validate one and only one schema \(oneOf\)/);
    assert.match(
      one({ type: 'string', not: { enum: ['forbidden'] } }, 'forbidden'),
      /must not validate the schema \(not\)/,
    );
  });

  it('x-kubernetes-validations (CEL) are not evaluated', () => {
    ok({ type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 100', message: 'too small' }] }, 1);
  });

  it('reports every problem, not just the first', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string' },
        size: { type: 'integer', maximum: 3 },
        mode: { type: 'string', enum: ['A'] },
      },
    };
    assert.deepEqual(
      errorsFor(schema, { size: 4, mode: 'B' })
        .map((e) => e.field)
        .sort(),
      ['spec.x.mode', 'spec.x.name', 'spec.x.size'],
    );
  });
});
