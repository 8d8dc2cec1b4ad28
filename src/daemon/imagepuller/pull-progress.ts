// How far a pull has come, from what containerd has written (CRI has no progress): the manifest the pull fetched is
// found by the labels containerd puts on fetched content (containerd.io/distribution.source.<registry host> = the
// repository, and one containerd.io/gc.ref.content.l.<n> per layer on a manifest), updated since the pull started;
// its layers and config are done when committed, or as far as their ingests' offsets. Percent of bytes, at most 99
// until the pull ends (Succeeded says 100). Undefined when it cannot be told (two manifests of the repository fetched
// at once); 0 until the manifest is in. CRI-O has no such API: no progress there.
import { tryParseNameAndTag } from '../../api/image-reference.js';
import type { ContentStore } from '../../cri/containerd-content.js';
import { isRecord } from '../../util/is-record.js';

export const DISTRIBUTION_SOURCE_LABEL = 'containerd.io/distribution.source';
const LAYER_LABEL_PREFIX = 'containerd.io/gc.ref.content.l.';

interface Blob {
  digest: string;
  size: number;
}

/** The label containerd gives what it fetched for `imageName`: keyed by the registry's host (port dropped). */
export function distributionSource(imageName: string, tag: string): { key: string; value: string } | undefined {
  const parsed = tryParseNameAndTag(imageName, tag);
  if (!parsed.ok) return undefined;
  const host = parsed.reference.registry.replace(/:\d+$/, '');
  return { key: `${DISTRIBUTION_SOURCE_LABEL}.${host}`, value: parsed.reference.path };
}

function blobsOf(manifest: unknown): Blob[] | undefined {
  if (!isRecord(manifest) || !Array.isArray(manifest.layers)) return undefined;
  const layers: unknown[] = manifest.layers;
  const blobs: Blob[] = [];
  for (const entry of [manifest.config, ...layers]) {
    if (!isRecord(entry) || typeof entry.digest !== 'string') return undefined;
    blobs.push({ digest: entry.digest, size: Number(entry.size ?? 0) });
  }
  return blobs;
}

export async function pullProgress(
  store: ContentStore,
  image: { imageName: string; tag: string },
  sinceMs: number,
): Promise<number | undefined> {
  const source = distributionSource(image.imageName, image.tag);
  if (!source) return undefined;
  // the clocks of the agent and containerd are the node's; a second of slack for the rounding of timestamps
  const manifests = (await store.listLabelled(source.key, source.value)).filter(
    (info) =>
      info.updatedAt >= sinceMs - 1000 && Object.keys(info.labels).some((key) => key.startsWith(LAYER_LABEL_PREFIX)),
  );
  if (manifests.length === 0) return 0;
  if (manifests.length > 1) return undefined;
  let blobs: Blob[] | undefined;
  try {
    blobs = blobsOf(JSON.parse((await store.read(manifests[0]!.digest)).toString('utf8')));
  } catch {
    return undefined;
  }
  if (!blobs) return undefined;
  const ingests = await store.ingests();
  let total = 0;
  let done = 0;
  for (const blob of blobs) {
    total += blob.size;
    if (await store.info(blob.digest)) {
      done += blob.size;
      continue;
    }
    const ingest = ingests.find((s) => s.expected === blob.digest || s.ref.endsWith(blob.digest));
    if (ingest) done += Math.min(ingest.offset, blob.size);
  }
  return total > 0 ? Math.min(99, Math.floor((done * 100) / total)) : 0;
}
