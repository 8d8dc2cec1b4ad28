// An ImagePullJob's status from the NodeImages it selects (pure): per node, is the job's tag there with this job
// as an owner (synced), and what phase the node reports for that tag's version. Also the nodes still to write
// (not synced, or missing the job's pull secrets) and the nodes whose tag lags behind an edit of the job's pull
// policy. Completion: Always jobs complete when every node finished, or at activeDeadlineSeconds.
import type { ReferenceObject, NodeImage } from '../../api/nodeimage.js';
import type { ImagePullJobStatus, ImagePullJob } from '../../api/imagepulljob.js';
import { parseTime, rfc3339 } from '../../util/time.js';
import { completionTypeOf, type JobImage } from './job-image.js';

export interface JobStatusResult {
  status: ImagePullJobStatus;
  /** NodeImage names to write this job's tag (or secrets) into, sorted. */
  notSynced: string[];
  /** Synced nodes whose tag carries an outdated imagePullPolicy / pull policy of this job. */
  drifted: string[];
  /** Completed by the deadline in this round. */
  deadlineExceeded: boolean;
}

export function sameRef(a: ReferenceObject, b: ReferenceObject): boolean {
  return (a.namespace ?? '') === (b.namespace ?? '') && a.name === b.name;
}

export function calculateJobStatus(
  job: ImagePullJob,
  image: JobImage,
  nodeImages: readonly NodeImage[],
  secretRefs: readonly ReferenceObject[],
  now: number,
): JobStatusResult {
  const uid = job.metadata.uid;
  const previous = job.status;
  const startTime = previous?.startTime ?? rfc3339(now);
  const notSynced: string[] = [];
  const drifted: string[] = [];
  const pulling: string[] = [];
  const succeeded: string[] = [];
  const failed: string[] = [];
  for (const nodeImage of nodeImages) {
    const node = nodeImage.metadata.name ?? '';
    const imageSpec = nodeImage.spec?.images?.[image.name];
    let version = -1;
    if (imageSpec) {
      const have = imageSpec.pullSecrets ?? [];
      if (secretRefs.some((want) => !have.some((h) => sameRef(h, want)))) notSynced.push(node);
      const tag = imageSpec.tags?.find((t) => t.tag === image.tag);
      if (tag && (tag.ownerReferences ?? []).some((ref) => ref.uid === uid)) {
        version = tag.version ?? 0;
        if (tagDrifts(job, tag)) drifted.push(node);
      }
    }
    if (version < 0) {
      if (!notSynced.includes(node)) notSynced.push(node);
      continue;
    }
    const reported = nodeImage.status?.imageStatuses?.[image.name]?.tags?.find((t) => t.tag === image.tag);
    if (!reported || (reported.version ?? 0) !== version) pulling.push(node);
    else if (reported.phase === 'Succeeded') succeeded.push(node);
    else if (reported.phase === 'Failed') failed.push(node);
    else pulling.push(node);
  }
  const desired = nodeImages.length;
  const always = completionTypeOf(job) === 'Always';
  const deadline = job.spec?.completionPolicy?.activeDeadlineSeconds;
  const started = parseTime(startTime) ?? now;
  const sortedNotSynced = [...new Set(notSynced)].sort();
  if (
    always &&
    deadline !== undefined &&
    deadline !== null &&
    desired !== succeeded.length + failed.length &&
    now - started >= deadline * 1000
  ) {
    const failedNodes = [
      ...failed,
      ...pulling,
      ...sortedNotSynced.filter((n) => !failed.includes(n) && !pulling.includes(n) && !succeeded.includes(n)),
    ];
    return {
      status: {
        startTime,
        completionTime: previous?.completionTime ?? rfc3339(now),
        desired,
        active: 0,
        succeeded: succeeded.length,
        failed: failedNodes.length,
        failedNodes: failedNodes.sort(),
        message: 'job exceeds activeDeadlineSeconds',
      },
      notSynced: [],
      drifted: [],
      deadlineExceeded: true,
    };
  }
  const status: ImagePullJobStatus = {
    startTime,
    desired,
    active: pulling.length,
    succeeded: succeeded.length,
    failed: failed.length,
  };
  if (failed.length > 0) status.failedNodes = [...failed].sort();
  if (always && desired - succeeded.length - failed.length === 0) {
    status.completionTime = previous?.completionTime ?? rfc3339(now);
  }
  status.message = statusMessage(status);
  return { status, notSynced: sortedNotSynced, drifted, deadlineExceeded: false };
}

export function statusMessage(status: ImagePullJobStatus): string {
  if (status.completionTime) return 'job has completed';
  if (status.desired === 0) return 'job is running, no progress';
  const progress = (100 * ((status.succeeded ?? 0) + (status.failed ?? 0))) / status.desired;
  return `job is running, progress ${progress.toFixed(1)}%`;
}

/** The tag's imagePullPolicy differs from the job's (OpenKruise #2221: edits must reach the tags). */
export function tagDrifts(
  job: ImagePullJob,
  tag: {
    imagePullPolicy?: string;
    ownerReferences?: { uid?: string | undefined }[];
    pullPolicy?: { timeoutSeconds?: number | undefined; backoffLimit?: number | undefined };
  },
): boolean {
  const wanted = job.spec?.imagePullPolicy;
  if (wanted && tag.imagePullPolicy !== wanted) return true;
  // Timeout and backoff follow the job only where it is the tag's sole owner (another job may want others).
  if ((tag.ownerReferences ?? []).length !== 1) return false;
  const policy = job.spec?.pullPolicy;
  if (policy?.timeoutSeconds !== undefined && tag.pullPolicy?.timeoutSeconds !== policy.timeoutSeconds) return true;
  if (policy?.backoffLimit !== undefined && tag.pullPolicy?.backoffLimit !== policy.backoffLimit) return true;
  return false;
}
