// Admission handlers of the image kinds: defaulting (mutating) and validation (validating) of NodeImage,
// ImagePullJob and ImageListPullJob, with src/api's rules and OpenKruise's messages; a denial names the field.
import { defaultImageListPullJob, defaultImagePullJob, defaultNodeImage } from '../../../api/defaults.js';
import type { FieldError } from '../../../api/field-errors.js';
import { validateImageListPullJob } from '../../../api/imagelistpulljob-validation.js';
import type { ImageListPullJob } from '../../../api/imagelistpulljob.js';
import { validateImagePullJob } from '../../../api/imagepulljob-validation.js';
import type { ImagePullJob } from '../../../api/imagepulljob.js';
import { validateNodeImage } from '../../../api/nodeimage-validation.js';
import type { NodeImage } from '../../../api/nodeimage.js';
import type { KubeObject } from '../../../kube/object.js';
import type { Clock } from '../../../util/clock.js';
import { rfc3339 } from '../../../util/time.js';
import { denyFor, type AdmissionHandler, type AdmissionRequest } from '../admission-review.js';

export const IMAGE_WEBHOOK_PATHS = {
  mutateNodeImage: '/mutate-apps-kruise-io-nodeimage',
  validateNodeImage: '/validate-apps-kruise-io-nodeimage',
  mutateImagePullJob: '/mutate-apps-kruise-io-imagepulljob',
  validateImagePullJob: '/validate-apps-kruise-io-imagepulljob',
  mutateImageListPullJob: '/mutate-apps-kruise-io-imagelistpulljob',
  validateImageListPullJob: '/validate-apps-kruise-io-imagelistpulljob',
} as const;

function writes(request: AdmissionRequest): request is AdmissionRequest & { object: KubeObject } {
  return (request.operation === 'CREATE' || request.operation === 'UPDATE') && !!request.object;
}

function mutating<T>(apply: (obj: T) => T): AdmissionHandler {
  return (request) => {
    if (!writes(request)) return { allowed: true };
    try {
      return { allowed: true, object: apply(request.object as T) as KubeObject };
    } catch {
      // An object too malformed to default: leave it as sent, validation says what is wrong.
      return { allowed: true };
    }
  };
}

function validating(check: (request: AdmissionRequest & { object: KubeObject }) => FieldError[]): AdmissionHandler {
  return (request) => {
    if (!writes(request)) return { allowed: true };
    const errors = check(request);
    return errors.length > 0 ? denyFor(errors) : { allowed: true };
  };
}

/** The stored object on update, for the rules that compare with it. */
function storedObject(request: AdmissionRequest): { oldObject?: unknown } {
  return request.operation === 'UPDATE' && request.oldObject ? { oldObject: request.oldObject } : {};
}

export function imageWebhookHandlers(clock: Clock): Record<string, AdmissionHandler> {
  return {
    [IMAGE_WEBHOOK_PATHS.mutateNodeImage]: mutating<NodeImage>((o) => defaultNodeImage(o, rfc3339(clock.now()))),
    [IMAGE_WEBHOOK_PATHS.validateNodeImage]: validating((r) => validateNodeImage(r.object)),
    [IMAGE_WEBHOOK_PATHS.mutateImagePullJob]: mutating<ImagePullJob>(defaultImagePullJob),
    [IMAGE_WEBHOOK_PATHS.validateImagePullJob]: validating((r) => validateImagePullJob(r.object, storedObject(r))),
    [IMAGE_WEBHOOK_PATHS.mutateImageListPullJob]: mutating<ImageListPullJob>(defaultImageListPullJob),
    [IMAGE_WEBHOOK_PATHS.validateImageListPullJob]: validating((r) =>
      validateImageListPullJob(r.object, storedObject(r)),
    ),
  };
}
