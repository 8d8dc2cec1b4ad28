// How far a pull has come, from what containerd has written (CRI has no progress): the manifest the pull fetched is
// found by the labels containerd puts on fetched content (containerd.io/distribution.source.<registry host> = the
// repository, and one containerd.io/gc.ref.content.l.<n> per layer on a manifest), updated since the pull started;
// its layers and config are done when committed, or as far as their ingests' offsets. Percent of bytes, at most 99
// until the pull ends (Succeeded says 100). Undefined when it cannot be told (two manifests of the repository fetched
// at once); 0 until the manifest is in. CRI-O has no such API: no progress there. The same bytes tell the disk check
// how much a running pull will still add (bytesStillToLand).
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

/** Bytes of a pull: its blobs' total (compressed, as the manifest says) and how many are in so far. */
export interface PullBytes {
  totalBytes: number;
  doneBytes: number;
}

/** What the pull has fetched of its manifest's blobs; totalBytes 0 until the manifest is in; undefined when unknown. */
export async function pullBytes(
  store: ContentStore,
  image: { imageName: string; tag: string },
  sinceMs: number,
): Promise<PullBytes | undefined> {
  const source = distributionSource(image.imageName, image.tag);
  if (!source) return undefined;
  // the clocks of the agent and containerd are the node's; a second of slack for the rounding of timestamps
  const manifests = (await store.listLabelled(source.key, source.value)).filter(
    (info) =>
      info.updatedAt >= sinceMs - 1000 && Object.keys(info.labels).some((key) => key.startsWith(LAYER_LABEL_PREFIX)),
  );
  if (manifests.length === 0) return { totalBytes: 0, doneBytes: 0 };
  if (manifests.length > 1) return undefined;
  let blobs: Blob[] | undefined;
  try {
    blobs = blobsOf(JSON.parse((await store.read(manifests[0]!.digest)).toString('utf8')));
  } catch {
    return undefined;
  }
  if (!blobs) return undefined;
  const ingests = await store.ingests();
  let totalBytes = 0;
  let doneBytes = 0;
  for (const blob of blobs) {
    totalBytes += blob.size;
    if (await store.info(blob.digest)) {
      doneBytes += blob.size;
      continue;
    }
    const ingest = ingests.find((s) => s.expected === blob.digest || s.ref.endsWith(blob.digest));
    if (ingest) doneBytes += Math.min(ingest.offset, blob.size);
  }
  return { totalBytes, doneBytes };
}

/** Percent of a pull's bytes in, at most 99 (the puller says 100 at Succeeded). */
export function percentOf(bytes: PullBytes): number {
  return bytes.totalBytes > 0 ? Math.min(99, Math.floor((bytes.doneBytes * 100) / bytes.totalBytes)) : 0;
}

export async function pullProgress(
  store: ContentStore,
  image: { imageName: string; tag: string },
  sinceMs: number,
): Promise<number | undefined> {
  const bytes = await pullBytes(store, image, sinceMs);
  return bytes === undefined ? undefined : percentOf(bytes);
}

/**
 * What a pull will still add to the image filesystem: the compressed bytes not yet in, and its layers unpacked into
 * snapshots, counted as twice their compressed size (gzip's usual ratio for container layers; a layer that does not
 * compress unpacks to about its own size, so this errs on the side of the disk).
 */
export const UNPACKED_PER_COMPRESSED_BYTE = 2;

export function bytesStillToLand(bytes: PullBytes): number {
  return Math.max(0, bytes.totalBytes - bytes.doneBytes) + UNPACKED_PER_COMPRESSED_BYTE * bytes.totalBytes;
}
