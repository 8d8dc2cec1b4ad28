// Garbage collection of a NodeImage's spec (pure): node labels copied over; tags without createdAt dropped; owner
// references to ImagePullJobs that are gone dropped, and a tag whose owners are all gone dropped; a tag finished
// longer ago than its ttlSecondsAfterFinished dropped; an image without tags left removed; a pull-secret reference
// to a copy the controller deleted (no job needs it any more) dropped. Works on a draft that the caller writes back
// (from a fresh read), and says when to look again for a TTL that has not run out yet.
import { KRUISE_DAEMON_CONFIG_NAMESPACE, KRUISE_GROUP, REFERENCE_OBJECT_MODE_BATCH } from '../../api/constants.js';
import { IMAGE_PULL_JOBS } from '../../api/imagepulljob.js';
import type { ObjectReference } from '../../api/meta.js';
import type { ImageSpec, ImageTagSpec, NodeImage, ReferenceObject } from '../../api/nodeimage.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { parseTime } from '../../util/time.js';

export type CollectReason = 'no-createdAt' | 'owner-gone' | 'ttl';

export interface CollectedTag {
  image: string;
  tag: string;
  reason: CollectReason;
}

export interface SpecGcInput {
  /** The Node's labels; undefined leaves the NodeImage's labels alone (no Node, e.g. a fake NodeImage). */
  nodeLabels?: Record<string, string>;
  /** UIDs of ImagePullJobs known to be gone. */
  goneJobUids: ReadonlySet<string>;
  /** Names of pull-secret copies (in kruise-daemon-config) known to be gone. */
  goneSecretCopies?: ReadonlySet<string>;
  now: number;
}

export interface SpecGcResult {
  changed: boolean;
  collected: CollectedTag[];
  /** Pull-secret references dropped because their copy is gone. */
  droppedSecrets: { image: string; name: string }[];
  /** A TTL still running: look again after this many ms. */
  requeueAfterMs?: number;
}

/** Is this reference one of the controller's pull-secret copies (mode batch, in kruise-daemon-config)? */
export function isSecretCopyRef(ref: ReferenceObject): boolean {
  return (
    ref.mode === REFERENCE_OBJECT_MODE_BATCH &&
    (ref.namespace || KRUISE_DAEMON_CONFIG_NAMESPACE) === KRUISE_DAEMON_CONFIG_NAMESPACE &&
    Boolean(ref.name)
  );
}

/** Is this tag owner an ImagePullJob (any served version)? Other owners are kept as they are. */
export function isImagePullJobRef(ref: ObjectReference): boolean {
  const group = (ref.apiVersion ?? '').split('/')[0];
  return ref.kind === IMAGE_PULL_JOBS.kind && group === KRUISE_GROUP;
}

export function collectSpecGarbage(draft: NodeImage, input: SpecGcInput): SpecGcResult {
  const result: SpecGcResult = { changed: false, collected: [], droppedSecrets: [] };
  if (input.nodeLabels && !jsonEqual(draft.metadata.labels ?? {}, input.nodeLabels)) {
    draft.metadata.labels = { ...input.nodeLabels };
    result.changed = true;
  }
  const images = draft.spec?.images;
  if (!images) return result;
  for (const [name, image] of Object.entries(images)) {
    dropGoneSecretCopies(name, image, input, result);
    const statusTags = draft.status?.imageStatuses?.[name]?.tags ?? [];
    const kept: ImageTagSpec[] = [];
    for (const tag of Array.isArray(image.tags) ? image.tags : []) {
      const reason = collectReason(tag, statusTags, input, result);
      if (reason) result.collected.push({ image: name, tag: tag.tag, reason });
      else kept.push(tag);
    }
    if (kept.length !== (image.tags?.length ?? 0)) result.changed = true;
    if (kept.length === 0) delete images[name];
    else image.tags = kept.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  }
  return result;
}

function collectReason(
  tag: ImageTagSpec,
  statusTags: readonly { tag: string; version?: number; completionTime?: string }[],
  input: SpecGcInput,
  result: SpecGcResult,
): CollectReason | undefined {
  if (!tag.createdAt) return 'no-createdAt';
  const owners = tag.ownerReferences ?? [];
  if (owners.length > 0) {
    const alive = owners.filter((ref) => !(isImagePullJobRef(ref) && ref.uid && input.goneJobUids.has(ref.uid)));
    if (alive.length === 0) return 'owner-gone';
    if (alive.length !== owners.length) {
      tag.ownerReferences = alive;
      result.changed = true;
    }
  }
  const ttl = tag.pullPolicy?.ttlSecondsAfterFinished;
  if (ttl !== undefined && ttl !== null) {
    const status = statusTags.find((s) => s.tag === tag.tag && (s.version ?? 0) === (tag.version ?? 0));
    const completed = parseTime(status?.completionTime);
    if (completed !== undefined) {
      const left = completed + ttl * 1000 - input.now;
      if (left <= 0) return 'ttl';
      result.requeueAfterMs = Math.min(result.requeueAfterMs ?? Infinity, left);
    }
  }
  return undefined;
}

function dropGoneSecretCopies(name: string, image: ImageSpec, input: SpecGcInput, result: SpecGcResult): void {
  const gone = input.goneSecretCopies;
  if (!gone || gone.size === 0 || !Array.isArray(image.pullSecrets)) return;
  const kept = image.pullSecrets.filter((ref) => {
    const drop = isSecretCopyRef(ref) && gone.has(ref.name ?? '');
    if (drop) result.droppedSecrets.push({ image: name, name: ref.name ?? '' });
    return !drop;
  });
  if (kept.length === image.pullSecrets.length) return;
  result.changed = true;
  if (kept.length === 0) delete image.pullSecrets;
  else image.pullSecrets = kept;
}
