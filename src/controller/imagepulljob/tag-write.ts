// Writing a job's tag into one NodeImage (pure; applied to a fresh read, or to the cache when it is known to be
// current): join an existing tag as an owner (version bumped so the node pulls again, createdAt and imagePullPolicy
// refreshed) or add the tag; add the job's pull-secret references; bring an owned tag's policy in line with an edited
// job. Returns whether the draft changed.
import {
  TAG_RETRY_FIRST_WAIT_MS,
  TAG_RETRY_MAX_WAIT_MS,
  type ImageTagPullPolicy,
  type ImageTagSpec,
  type NodeImage,
  type ReferenceObject,
} from '../../api/nodeimage.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import type { ImagePullJob } from '../../api/imagepulljob.js';
import { rfc3339 } from '../../util/time.js';
import { completionTypeOf, ownerRefOf, type JobImage } from './job-image.js';
import { sameRef, tagDrifts } from './job-status.js';

export const NEVER_TAG_TTL_SECONDS = 86_400;
export const NEVER_MIN_ACTIVE_DEADLINE_SECONDS = 1800;

/**
 * A Never job's deadline for its tags: at least 1800 s, and long enough for every attempt the job allows
 * (backoffLimit + 1 attempts of timeoutSeconds each, and the waits between them). OpenKruise takes
 * max(1800, timeoutSeconds), so a job whose attempts need longer is cut short before its retries (its issue #2071).
 */
export function neverActiveDeadlineSeconds(timeoutSeconds: number, backoffLimit: number): number {
  let waitsMs = 0;
  for (let i = 0, wait = TAG_RETRY_FIRST_WAIT_MS; i < backoffLimit; i++) {
    waitsMs += wait;
    wait = Math.min(2 * wait, TAG_RETRY_MAX_WAIT_MS);
  }
  return Math.max(NEVER_MIN_ACTIVE_DEADLINE_SECONDS, timeoutSeconds * (backoffLimit + 1) + Math.ceil(waitsMs / 1000));
}

export interface TagPolicyOptions {
  /** Added to an Always job's own TTL for its tags (--default-ttlseconds-for-always-nodeimage, 300). */
  defaultTtlSeconds: number;
  random: () => number;
}

/**
 * The pull policy a new tag of this job gets (OpenKruise's rules, so a Never job re-pulls about daily; its deadline
 * covers every attempt).
 */
export function tagPullPolicyFor(job: ImagePullJob, options: TagPolicyOptions): ImageTagPullPolicy {
  const timeoutSeconds = job.spec?.pullPolicy?.timeoutSeconds ?? 600;
  const backoffLimit = job.spec?.pullPolicy?.backoffLimit ?? 3;
  const completion = job.spec?.completionPolicy;
  if (completionTypeOf(job) === 'Never') {
    return {
      timeoutSeconds,
      backoffLimit,
      ttlSecondsAfterFinished: NEVER_TAG_TTL_SECONDS + Math.floor(options.random() * 1200) - 600,
      activeDeadlineSeconds: neverActiveDeadlineSeconds(timeoutSeconds, backoffLimit),
    };
  }
  const base =
    completion?.ttlSecondsAfterFinished ?? completion?.activeDeadlineSeconds ?? timeoutSeconds * backoffLimit;
  const policy: ImageTagPullPolicy = {
    timeoutSeconds,
    backoffLimit,
    ttlSecondsAfterFinished: base + options.defaultTtlSeconds + Math.floor(options.random() * 300),
  };
  if (completion?.activeDeadlineSeconds !== undefined) policy.activeDeadlineSeconds = completion.activeDeadlineSeconds;
  return policy;
}

export function writeJobTag(
  draft: NodeImage,
  job: ImagePullJob,
  image: JobImage,
  secretRefs: readonly ReferenceObject[],
  now: number,
  policy: TagPolicyOptions,
): boolean {
  const before = structuredClone(draft.spec ?? {});
  draft.spec ??= {};
  draft.spec.images ??= {};
  const imageSpec = (draft.spec.images[image.name] ??= { tags: [] });
  imageSpec.tags ??= [];
  if (job.spec?.sandboxConfig && !jsonEqual(imageSpec.sandboxConfig ?? null, job.spec.sandboxConfig)) {
    imageSpec.sandboxConfig = structuredClone(job.spec.sandboxConfig);
  }
  const pullSecrets = (imageSpec.pullSecrets ??= []);
  for (const ref of secretRefs) if (!pullSecrets.some((have) => sameRef(have, ref))) pullSecrets.push({ ...ref });
  if (pullSecrets.length === 0) delete imageSpec.pullSecrets;

  const owner = ownerRefOf(job);
  const wantedPolicy = job.spec?.imagePullPolicy;
  const existing = imageSpec.tags.find((t) => t.tag === image.tag);
  if (existing) {
    const owners = (existing.ownerReferences ??= []);
    if (owners.some((ref) => ref.uid === owner.uid)) {
      if (tagDrifts(job, existing)) {
        if (wantedPolicy) existing.imagePullPolicy = wantedPolicy;
        if (owners.length === 1) {
          existing.pullPolicy = {
            ...existing.pullPolicy,
            timeoutSeconds: job.spec?.pullPolicy?.timeoutSeconds ?? existing.pullPolicy?.timeoutSeconds,
            backoffLimit: job.spec?.pullPolicy?.backoffLimit ?? existing.pullPolicy?.backoffLimit,
          };
        }
      }
    } else {
      existing.version = (existing.version ?? 0) + 1;
      owners.push(owner);
      existing.createdAt = rfc3339(now);
      if (wantedPolicy) existing.imagePullPolicy = wantedPolicy;
      existing.pullPolicy ??= tagPullPolicyFor(job, policy);
    }
  } else {
    const reported = draft.status?.imageStatuses?.[image.name]?.tags?.find((t) => t.tag === image.tag);
    const tag: ImageTagSpec = {
      tag: image.tag,
      version: (reported?.version ?? -1) + 1,
      pullPolicy: tagPullPolicyFor(job, policy),
      ownerReferences: [owner],
      createdAt: rfc3339(now),
    };
    if (wantedPolicy) tag.imagePullPolicy = wantedPolicy;
    imageSpec.tags.push(tag);
  }
  imageSpec.tags.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  return !jsonEqual(JSON.parse(JSON.stringify(before)), JSON.parse(JSON.stringify(draft.spec)));
}
