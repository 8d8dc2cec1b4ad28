// The NodeImage status the agent reports, built fresh from the spec and the agent's own view of each tag:
// tags in spec order (sorted by tag), images without any tag status left out, counters from the tag phases.
import type {
  ImagePullPhase,
  ImageStatus,
  ImageTagStatus,
  NodeImageSpec,
  NodeImageStatus,
} from '../../api/nodeimage.js';

export type TagStatusLookup = (imageName: string, tag: string) => ImageTagStatus | undefined;

export type PhaseCounts = Record<ImagePullPhase, number>;

export function emptyPhaseCounts(): PhaseCounts {
  return { Waiting: 0, Pulling: 0, Succeeded: 0, Failed: 0 };
}

/** The tags of one image spec that can be keyed: entries that are objects with a non-empty string tag. */
export function specTags(image: unknown): Array<Record<string, unknown> & { tag: string }> {
  if (typeof image !== 'object' || image === null) return [];
  const tags = (image as { tags?: unknown }).tags;
  if (!Array.isArray(tags)) return [];
  return tags.filter(
    (t): t is Record<string, unknown> & { tag: string } =>
      typeof t === 'object' &&
      t !== null &&
      typeof (t as { tag?: unknown }).tag === 'string' &&
      (t as { tag: string }).tag !== '',
  );
}

export function buildNodeImageStatus(spec: NodeImageSpec | undefined, lookup: TagStatusLookup): NodeImageStatus {
  const counts = emptyPhaseCounts();
  let desired = 0;
  const imageStatuses: Record<string, ImageStatus> = {};
  const images = spec?.images && typeof spec.images === 'object' ? spec.images : {};
  for (const name of Object.keys(images).sort()) {
    const tags: ImageTagStatus[] = [];
    const rawTags = (images[name] as { tags?: unknown } | undefined)?.tags;
    desired += Array.isArray(rawTags) ? rawTags.length : 0;
    for (const tag of specTags(images[name])) {
      const status = lookup(name, tag.tag);
      if (!status) continue;
      tags.push(status);
      counts[status.phase]++;
    }
    if (tags.length > 0)
      imageStatuses[name] = { tags: tags.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)) };
  }
  const status: NodeImageStatus = {
    desired,
    succeeded: counts.Succeeded,
    failed: counts.Failed,
    pulling: counts.Pulling,
    waiting: counts.Waiting,
  };
  if (Object.keys(imageStatuses).length > 0) status.imageStatuses = imageStatuses;
  return status;
}

export function countPhases(status: NodeImageStatus): PhaseCounts {
  const counts = emptyPhaseCounts();
  for (const image of Object.values(status.imageStatuses ?? {})) for (const tag of image.tags) counts[tag.phase]++;
  return counts;
}
