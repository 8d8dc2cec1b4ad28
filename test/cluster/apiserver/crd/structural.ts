// CRD schemas must be structural; the schema module checks it, this turns its findings into field errors.
import { checkStructural } from '../schema/index.js';
import type { FieldError } from '../field-errors.js';

export function structuralErrors(schema: unknown, path: string): FieldError[] {
  return checkStructural(schema, path).map((line) => {
    const sep = line.indexOf(': ');
    const field = sep > 0 ? line.slice(0, sep) : path;
    const message = sep > 0 ? line.slice(sep + 2) : line;
    return { field, type: 'FieldValueForbidden', message };
  });
}
