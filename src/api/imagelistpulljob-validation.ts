// ImageListPullJob validation: OpenKruise's webhook rules and messages, as field errors.
// (No deadline-versus-timeout check and no pullSecrets immutability, as OpenKruise.) Never throws.

import { MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB } from './constants.js';
import { fieldError, typeError } from './field-checks.js';
import { indexPath, type FieldError } from './field-errors.js';
import { validateImageReference } from './image-reference.js';
import { IMAGE_LIST_PULL_JOBS } from './imagelistpulljob.js';
import { jobSpecOf, validateJobTemplate, type JobValidationOptions } from './job-template-validation.js';

/** Pass the stored object as `oldObject` on update (a bound the job already broke is let through). */
export function validateImageListPullJob(job: unknown, options: JobValidationOptions = {}): FieldError[] {
  const checked = jobSpecOf(IMAGE_LIST_PULL_JOBS.kind, job);
  if ('errors' in checked) return checked.errors;
  const { spec } = checked;
  return validateJobTemplate(spec, validateImages(spec['images']), options);
}

function validateImages(images: unknown): FieldError[] {
  const shapeError = typeError('spec.images', images, 'array');
  if (shapeError) return [shapeError];
  if (!Array.isArray(images) || images.length === 0) {
    return [fieldError('FieldValueRequired', 'spec.images', 'image can not be empty')];
  }
  const errors: FieldError[] = [];
  if (images.length > MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB) {
    errors.push(
      fieldError(
        'FieldValueTooMany',
        'spec.images',
        `the maximum number of images cannot > ${MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB}`,
        images.length,
      ),
    );
  }
  const seen = new Set<unknown>();
  images.forEach((image: unknown, index) => {
    const path = indexPath('spec.images', index);
    if (seen.has(image)) {
      errors.push(fieldError('FieldValueDuplicate', path, 'images cannot have duplicate values', image));
    }
    seen.add(image);
    const problem = validateImageReference(image);
    if (problem) errors.push(fieldError('FieldValueInvalid', path, `invalid image ${String(image)}: ${problem}`));
  });
  return errors;
}
