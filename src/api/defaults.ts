// Defaulting of the image kinds, as OpenKruise's mutating webhooks do it (apis/apps/defaults). Each
// function returns a defaulted copy and leaves its argument alone. Time comes in as a parameter. A policy
// that is present but not an object is left as sent, so that the schema or validation names it (spreading
// a string into an object would turn `pullPolicy: fast` into unknown fields "0".."3").

import { DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS } from './constants.js';
import type { ImageListPullJob } from './imagelistpulljob.js';
import type { CompletionPolicy, ImagePullJob, PullPolicy } from './imagepulljob.js';
import type { Time } from './meta.js';
import type { ImageTagPullPolicy, NodeImage } from './nodeimage.js';
import { isRecord } from '../util/is-record.js';

/**
 * NodeImage: every tag gets `createdAt` (now) and a pull policy with timeoutSeconds 600 and backoffLimit 3
 * where missing; spec tags and status tags are sorted by `tag`. Applies on create and update.
 */
export function defaultNodeImage(nodeImage: NodeImage, now: Time): NodeImage {
  const out = structuredClone(nodeImage);
  for (const image of Object.values(out.spec?.images ?? {})) {
    if (!Array.isArray(image.tags)) continue;
    for (const tag of image.tags) {
      tag.createdAt ??= now;
      tag.pullPolicy = unlessMalformed(tag.pullPolicy, withTagPullDefaults);
    }
    image.tags.sort(byTag);
  }
  for (const status of Object.values(out.status?.imageStatuses ?? {})) {
    if (Array.isArray(status.tags)) status.tags.sort(byTag);
  }
  return out;
}

/**
 * ImagePullJob: completionPolicy.type Always, pullPolicy {600, 3}, imagePullPolicy IfNotPresent.
 * (The v1alpha1 webhook also adds the protection finalizer on create; at v1beta1 the controller does.)
 */
export function defaultImagePullJob(job: ImagePullJob): ImagePullJob {
  const out = structuredClone(job);
  out.spec.completionPolicy = unlessMalformed(out.spec.completionPolicy, withCompletionDefaults);
  out.spec.pullPolicy = unlessMalformed(out.spec.pullPolicy, withJobPullDefaults);
  out.spec.imagePullPolicy ||= 'IfNotPresent';
  return out;
}

/** ImageListPullJob: completionPolicy.type Always and pullPolicy {600, 3}; imagePullPolicy is left alone. */
export function defaultImageListPullJob(job: ImageListPullJob): ImageListPullJob {
  const out = structuredClone(job);
  out.spec.completionPolicy = unlessMalformed(out.spec.completionPolicy, withCompletionDefaults);
  out.spec.pullPolicy = unlessMalformed(out.spec.pullPolicy, withJobPullDefaults);
  return out;
}

function withTagPullDefaults(policy: ImageTagPullPolicy | undefined): ImageTagPullPolicy {
  return {
    ...policy,
    timeoutSeconds: policy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS,
    backoffLimit: policy?.backoffLimit ?? DEFAULT_PULL_BACKOFF_LIMIT,
  };
}

function withJobPullDefaults(policy: PullPolicy | undefined): PullPolicy {
  return {
    ...policy,
    timeoutSeconds: policy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS,
    backoffLimit: policy?.backoffLimit ?? DEFAULT_PULL_BACKOFF_LIMIT,
  };
}

function withCompletionDefaults(policy: CompletionPolicy | undefined): CompletionPolicy {
  return { ...policy, type: policy?.type || 'Always' };
}

/** `fill(policy)`, unless the policy is present but not an object (whatever its declared type says). */
function unlessMalformed<T>(policy: T | undefined, fill: (policy: T | undefined) => T): T {
  return policy !== undefined && policy !== null && !isRecord(policy) ? policy : fill(policy);
}

function byTag(a: { tag: string }, b: { tag: string }): number {
  return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
}
