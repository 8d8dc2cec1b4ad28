// ImagePullJob validation: OpenKruise's webhook rules and messages, as field errors. Pass the stored
// object as `oldObject` on update (spec.pullSecrets is immutable; bounds are ratcheted). Takes raw input; never throws.

import { DEFAULT_PULL_TIMEOUT_SECONDS } from './constants.js';
import { fieldError, optionalInteger, typeError } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { validateImageReference } from './image-reference.js';
import { IMAGE_PULL_JOBS } from './imagepulljob.js';
import { jobSpecOf, validateJobTemplate, type JobValidationOptions } from './job-template-validation.js';
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

  errors.push(...validateJobTemplate(spec, validateImage(spec['image']), options));
  errors.push(...validateDeadlineVersusTimeout(spec));
  return errors;
}

function validateImage(image: unknown): FieldError[] {
  const imageError = typeError('spec.image', image, 'string');
  if (imageError) return [imageError];
  // Past the type check an image is a string, or absent (undefined, null).
  if (typeof image !== 'string' || image === '') {
    return [fieldError('FieldValueRequired', 'spec.image', 'image can not be empty')];
  }
  const problem = validateImageReference(image);
  return problem ? [fieldError('FieldValueInvalid', 'spec.image', `invalid image ${image}: ${problem}`)] : [];
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
