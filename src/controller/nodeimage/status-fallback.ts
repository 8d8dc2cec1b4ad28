// The controller's fallback on a NodeImage's status (pure): a tag with no status for its version within the
// response timeout (10 min after createdAt) is marked Failed "node has not responded for a long time"; a tag still
// unfinished after createdAt + activeDeadlineSeconds + the response timeout is marked Failed "pulling exceeds the
// activeDeadlineSeconds". Status entries of tags no longer in spec are pruned and every counter recomputed.
import type { ImageTagStatus, NodeImage, NodeImageStatus } from '../../api/nodeimage.js';
import type { ObjectReference } from '../../api/meta.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { parseTime, rfc3339 } from '../../util/time.js';

export const RESPONSE_TIMEOUT_MS = 10 * 60_000;
export const NOT_RESPONDED_MESSAGE = 'node has not responded for a long time';
export const DEADLINE_EXCEEDED_MESSAGE = 'pulling exceeds the activeDeadlineSeconds';

export interface FailedTag {
  image: string;
  tag: string;
  reason: 'not-responded' | 'deadline';
  message: string;
  owners: ObjectReference[];
}

export interface StatusFallbackResult {
  status: NodeImageStatus;
  changed: boolean;
  failed: FailedTag[];
  requeueAfterMs?: number;
}

export function statusWithFallback(
  nodeImage: NodeImage,
  now: number,
  responseTimeoutMs = RESPONSE_TIMEOUT_MS,
): StatusFallbackResult {
  const before = nodeImage.status ?? { desired: 0 };
  const status: NodeImageStatus = structuredClone(before);
  const result: StatusFallbackResult = { status, changed: false, failed: [] };
  const statuses: Record<string, { tags: ImageTagStatus[] }> = {};
  const later = (ms: number): void => {
    result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, Math.max(ms, 1));
  };
  for (const [name, image] of Object.entries(nodeImage.spec?.images ?? {})) {
    const known = status.imageStatuses?.[name]?.tags ?? [];
    const tags: ImageTagStatus[] = [];
    for (const spec of image.tags ?? []) {
      const current = known.find((t) => t.tag === spec.tag);
      const version = spec.version ?? 0;
      const created = parseTime(spec.createdAt);
      if (created === undefined) {
        if (current) tags.push(current);
        continue;
      }
      const fail = (reason: FailedTag['reason'], message: string): void => {
        tags.push({ tag: spec.tag, phase: 'Failed', completionTime: rfc3339(now), version, message });
        result.failed.push({ image: name, tag: spec.tag, reason, message, owners: spec.ownerReferences ?? [] });
      };
      if (!current || (current.version ?? 0) !== version) {
        const left = created + responseTimeoutMs - now;
        if (left > 0) {
          later(left);
          if (current) tags.push(current);
        } else fail('not-responded', NOT_RESPONDED_MESSAGE);
        continue;
      }
      const deadline = spec.pullPolicy?.activeDeadlineSeconds;
      if (!current.completionTime && deadline !== undefined && deadline !== null) {
        const left = created + deadline * 1000 + responseTimeoutMs - now;
        if (left > 0) later(left);
        else {
          fail('deadline', DEADLINE_EXCEEDED_MESSAGE);
          continue;
        }
      }
      tags.push(current);
    }
    if (tags.length > 0) statuses[name] = { tags: tags.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)) };
  }
  // Only a changed tag list is worth a write (the agent owns the status otherwise; no counter tug-of-war).
  const next = Object.keys(statuses).length > 0 ? statuses : undefined;
  result.changed = !jsonEqual(toPlain(before.imageStatuses ?? {}), toPlain(next ?? {}));
  if (!result.changed) return result;
  if (next) status.imageStatuses = next;
  else delete status.imageStatuses;
  recount(nodeImage, status);
  return result;
}

/** desired = spec tags; succeeded/failed/pulling/waiting = status tags of the spec's version in each phase. */
export function recount(nodeImage: NodeImage, status: NodeImageStatus): void {
  let desired = 0;
  const counts = { Succeeded: 0, Failed: 0, Pulling: 0, Waiting: 0 };
  for (const [name, image] of Object.entries(nodeImage.spec?.images ?? {})) {
    desired += image.tags?.length ?? 0;
    for (const tag of status.imageStatuses?.[name]?.tags ?? []) {
      if (tag.phase in counts) counts[tag.phase]++;
    }
  }
  status.desired = desired;
  status.succeeded = counts.Succeeded;
  status.failed = counts.Failed;
  status.pulling = counts.Pulling;
  status.waiting = counts.Waiting;
}

function toPlain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}
