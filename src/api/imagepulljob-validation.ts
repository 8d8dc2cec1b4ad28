// ImagePullJob validation: OpenKruise's webhook rules and messages, as field errors. Pass the stored
// object as `oldObject` on update (spec.pullSecrets is immutable; bounds are ratcheted). Takes raw input; never throws.

import { DEFAULT_PULL_TIMEOUT_SECONDS } from './constants.js';
import { fieldError, optionalInteger, typeError } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { validateImageReference } from './image-reference.js';
import { IMAGE_PULL_JOBS } from './imagepulljob.js';
import {
  jobSpecOf,
  validateCompletionPolicy,
  validateParallelism,
  validateSelectors,
  validateTemplateShapes,
  type JobValidationOptions,
} from './job-template-validation.js';
import { isRecord } from '../util/is-record.js';

export function validateImagePullJob(job: unknown, options: JobValidationOptions = {}): FieldError[] {
  const checked = jobSpecOf(IMAGE_PULL_JOBS.kind, job);
  if ('errors' in checked) return checked.errors;
  const { spec } = checked;
  const errors: FieldError[] = [];

  if (options.oldObject !== undefined) {
    const oldSpec = isRecord(options.oldObject) ? options.oldObject['spec'] : undefined;
    const oldSecrets = isRecord(oldSpec) ? oldSpec['pullSecrets'] : undefined;
    if (!sameStringList(oldSecrets, spec['pullSecrets'])) {
      errors.push(fieldError('FieldValueForbidden', 'spec.pullSecrets', 'spec.pullSecrets is immutable'));
    }
  }

  errors.push(...validateSelectors(spec));

  const image = spec['image'];
  const imageError = typeError('spec.image', image, 'string');
  if (imageError) errors.push(imageError);
  else if (image === undefined || image === null || image === '') {
    errors.push(fieldError('FieldValueRequired', 'spec.image', 'image can not be empty'));
  } else if (typeof image === 'string') {
    const problem = validateImageReference(image);
    if (problem) errors.push(fieldError('FieldValueInvalid', 'spec.image', `invalid image ${image}: ${problem}`));
  }

  errors.push(...validateParallelism(spec['parallelism']));
  errors.push(...validateTemplateShapes(spec, options));
  errors.push(...validateCompletionPolicy(spec, options));
  errors.push(...validateDeadlineVersusTimeout(spec));
  return errors;
}

/**
 * With type Always, a deadline shorter than one pull attempt's timeout (default 600) can never be met. Only for a
 * deadline and timeout that are valid themselves (those are reported on their own).
 */
function validateDeadlineVersusTimeout(spec: Record<string, unknown>): FieldError[] {
  const completion = spec['completionPolicy'];
  if (!isRecord(completion)) return [];
  const type = completion['type'];
  if (type !== undefined && type !== null && type !== '' && type !== 'Always') return [];
  const deadline = optionalInteger(completion['activeDeadlineSeconds']);
  if (deadline === undefined || deadline < 1) return [];
  const pullPolicy = spec['pullPolicy'];
  const givenTimeout = isRecord(pullPolicy) ? optionalInteger(pullPolicy['timeoutSeconds']) : undefined;
  const timeout = givenTimeout ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  if (timeout < 1 || timeout <= deadline) return [];
  const which = givenTimeout === undefined ? `${timeout}, its default` : `${timeout}`;
  return [
    fieldError(
      'FieldValueInvalid',
      'spec.completionPolicy.activeDeadlineSeconds',
      `completionPolicy.activeDeadlineSeconds must be greater than or equal to pullPolicy.timeoutSeconds (${which})`,
      deadline,
    ),
  ];
}

/** Equal as lists of strings, treating missing and empty as the same. */
function sameStringList(a: unknown, b: unknown): boolean {
  const left = Array.isArray(a) ? a : [];
  const right = Array.isArray(b) ? b : [];
  return left.length === right.length && left.every((value, index) => value === right[index]);
}
