// The API emulator's CRD schema module: what kube-apiserver does with custom resources and their
// structural schemas. Pure functions, no I/O. CEL rules (x-kubernetes-validations) are not evaluated.
//
//   applyStructuralSchema(schema, obj, { mode, oldObject }) → { object, errors, unknownFields }
//   checkStructural(schema, basePath?) → string[]   (checkStructuralErrors: the same as FieldError[])
//   formatInvalidStatus(kind, name, errors, group?) → 422 Status body

export { applyStructuralSchema, type ApplySchemaOptions, type ApplySchemaResult } from './apply.js';
export { checkStructural, checkStructuralErrors } from './structural.js';
export { formatInvalidStatus, type InvalidStatus, type StatusCause } from './status.js';
export type { JSONSchemaProps, ValidationRule } from './types.js';
export type { FieldError, FieldErrorType } from '../../../../src/api/field-errors.js';
