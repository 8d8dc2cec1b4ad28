// What a job pulls, in NodeImage terms: the image's familiar name (the spec.images key) and the tag or digest.
// Also the job's parallelism and its owner reference as written into NodeImage tags.
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../api/imagepulljob.js';
import { nameAndTag, tryParseImageReference } from '../../api/image-reference.js';
import type { ObjectReference } from '../../api/meta.js';
import { apiVersionOf } from '../../kube/resource.js';

export interface JobImage {
  name: string;
  tag: string;
}

/** The (name, tag) of the job's image; an error message when the image is not a valid reference. */
export function jobImageOf(job: ImagePullJob): JobImage | { error: string } {
  const parsed = tryParseImageReference(job.spec?.image);
  if (!parsed.ok) return { error: `invalid image ${String(job.spec?.image)}: ${parsed.error}` };
  return nameAndTag(parsed.reference);
}

/** Nodes pulling at once: default 1, 0 pauses; a bad value counts as 0 (paused) rather than crashing. */
export function parallelismOf(job: ImagePullJob): number {
  const value = job.spec?.parallelism;
  if (value === undefined || value === null) return 1;
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

export function ownerRefOf(job: ImagePullJob): ObjectReference {
  return {
    apiVersion: apiVersionOf(IMAGE_PULL_JOBS),
    kind: IMAGE_PULL_JOBS.kind,
    name: job.metadata.name,
    namespace: job.metadata.namespace,
    uid: job.metadata.uid,
  };
}

export function isActiveJob(job: ImagePullJob): boolean {
  return !job.metadata.deletionTimestamp && !job.status?.completionTime;
}

export function completionTypeOf(job: ImagePullJob): 'Always' | 'Never' {
  return job.spec?.completionPolicy?.type === 'Never' ? 'Never' : 'Always';
}
