import assert from 'node:assert/strict';
import { formatFieldError, formatFieldErrors, type FieldError } from '../../../src/api/field-errors.js';

describe('field errors as a denial prints them', () => {
  it('puts the value given between the field and the rule, as kube does', () => {
    const cases: [FieldError, string][] = [
      [
        { field: 'spec.a', type: 'FieldValueInvalid', message: 'must be greater than 0', value: -1 },
        'spec.a: Invalid value: -1: must be greater than 0',
      ],
      [
        { field: 'spec.b', type: 'FieldValueNotSupported', message: 'supported values: "X"', value: 'Y' },
        'spec.b: Unsupported value: "Y": supported values: "X"',
      ],
      [
        { field: 'spec.c', type: 'FieldValueTypeInvalid', message: 'must be of type array, got object', value: {} },
        'spec.c: Invalid value: {}: must be of type array, got object',
      ],
      [
        { field: 'spec.d', type: 'FieldValueDuplicate', message: 'twice', value: null },
        'spec.d: Duplicate value: null: twice',
      ],
      [{ field: 'spec.e', type: 'FieldValueRequired', message: 'e can not be empty' }, 'spec.e: e can not be empty'],
    ];
    for (const [error, text] of cases) assert.equal(formatFieldError(error), text);
  });

  it('shortens a long value given', () => {
    const text = formatFieldError({
      field: 'spec.x',
      type: 'FieldValueTypeInvalid',
      message: 'must be of type string, got array',
      value: Array.from({ length: 50 }, (_, i) => `item-${i}`),
    });
    assert.match(text, /^spec\.x: Invalid value: \["item-0","item-1",.*…: must be of type string, got array$/);
    assert.ok(text.length < 160, text);
  });

  it('joins several errors in brackets, each once', () => {
    const a: FieldError = { field: 'a', type: 'FieldValueInvalid', message: 'bad', value: 1 };
    const b: FieldError = { field: 'b', type: 'FieldValueRequired', message: 'b can not be empty' };
    assert.equal(formatFieldErrors([a, b, a]), '[a: Invalid value: 1: bad, b: b can not be empty]');
  });
});
