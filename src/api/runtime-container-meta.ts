// apps.kruise.io/runtime-containers-meta (pod annotation written by the agent) and apps.kruise.io/inplace-update-state,
// and the hashes OpenKruise puts in them, byte-exact: FNV-1a 32 over go-spew's `%#v` text of the JSON bytes
// ("([]uint8)[" + decimal bytes joined by spaces + "]"), as hashutil.DeepHashObject does on a []byte.
import type { Wire } from './wire.js';
import type { V1Container } from '@kubernetes/client-node';
import { isRecord } from '../util/is-record.js';

export interface RuntimeContainerHashes {
  /** kubelet's container hash (annotation io.kubernetes.container.hash). */
  plainHash: number;
  /** Hash of the env vars fed from pod metadata, as the container sees them; 0 = not computed yet. */
  extractedEnvFromMetadataHash?: number;
}

export interface RuntimeContainerMeta {
  name: string;
  containerID: string;
  restartCount: number;
  hashes: RuntimeContainerHashes;
}

export interface RuntimeContainerMetaSet {
  containers: RuntimeContainerMeta[];
}

export interface InPlaceUpdateContainerBatch {
  timestamp: string;
  containers: string[];
}

/** The subset of OpenKruise's InPlaceUpdateState the agent reads and extends; other fields are kept as they are. */
export interface InPlaceUpdateState {
  revision?: string;
  updateTimestamp?: string;
  updateEnvFromMetadata?: boolean;
  containerBatchesRecord?: InPlaceUpdateContainerBatch[];
  [field: string]: unknown;
}

/**
 * The image id a container ran before the in-place update under way changed its image: OpenKruise's manager records
 * it in `lastContainerStatuses` for each container whose image the update changes, and only for those
 * (pkg/util/inplaceupdate). Undefined when the state names no such container (or is not what it should be).
 */
export function imageIdBeforeUpdate(state: InPlaceUpdateState | undefined, container: string): string | undefined {
  const last = state?.['lastContainerStatuses'];
  if (!isRecord(last)) return undefined;
  const entry = last[container];
  const imageID = isRecord(entry) ? entry['imageID'] : undefined;
  return typeof imageID === 'string' && imageID !== '' ? imageID : undefined;
}

/** Env names OpenKruise leaves out of the env hash (SidecarSet versions). */
export const ENV_HASH_EXCLUDED = new Set(['SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT']);

/** FNV-1a 32-bit of go-spew's dump of a byte slice. */
export function deepHashBytes(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  const text = `([]uint8)[${Array.from(bytes).join(' ')}]`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** JSON the way Go's encoding/json writes strings (HTML-safe escapes). */
export function goJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function deepHashJson(json: string): number {
  return deepHashBytes(Buffer.from(json, 'utf8'));
}

/** kubelet ≥ 1.31 HashContainer: {"image","name"}. */
export function kubeletContainerHash(container: { name: string; image?: string }): number {
  return deepHashJson(goJson({ image: container.image ?? '', name: container.name }));
}

export type MetadataKind = 'annotations' | 'labels';

/** `metadata.annotations['k']` / `metadata.labels['k']` → {kind, key}; anything else undefined. */
export function metadataFieldRef(fieldPath: string | undefined): { kind: MetadataKind; key: string } | undefined {
  const match = /^metadata\.(annotations|labels)\['(.*)'\]$/.exec(fieldPath ?? '');
  return match ? { kind: match[1] as MetadataKind, key: match[2]! } : undefined;
}

export interface EnvFromMetadata {
  env: string;
  kind: MetadataKind;
  key: string;
}

/** The container's env vars fed from pod labels/annotations (OpenKruise's selection). */
export function envFromMetadata(container: Wire<V1Container>): EnvFromMetadata[] {
  const out: EnvFromMetadata[] = [];
  for (const e of container.env ?? []) {
    if (e.value || !e.valueFrom?.fieldRef || ENV_HASH_EXCLUDED.has(e.name)) continue;
    const ref = metadataFieldRef(e.valueFrom.fieldRef.fieldPath);
    if (ref) out.push({ env: e.name, ...ref });
  }
  return out;
}

/** Hash of name/value pairs: sorted by name (stable), Go JSON of [{name, value?}] (nil slice → null). */
export function envHash(pairs: Array<{ name: string; value: string }>): number {
  if (pairs.length === 0) return deepHashJson('null');
  const sorted = pairs
    .map((p, i) => ({ ...p, i }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.i - b.i))
    .map((p) => (p.value === '' ? { name: p.name } : { name: p.name, value: p.value }));
  return deepHashJson(goJson(sorted));
}

/** The env hash the container should have: values from the pod's labels/annotations now. */
export function expectedEnvHash(
  container: Wire<V1Container>,
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> },
): number {
  return envHash(envFromMetadata(container).map((r) => ({ name: r.env, value: metadata[r.kind]?.[r.key] ?? '' })));
}

/** The env hash the container has: values read from its environment (`env` output), missing → "". */
export function currentEnvHash(container: Wire<V1Container>, envOutput: string): number {
  const values = new Map<string, string>();
  for (const line of envOutput.trim().split('\n')) {
    const trimmed = line.trim();
    const eq = trimmed.indexOf('=');
    if (eq > 0) values.set(trimmed.slice(0, eq), trimmed.slice(eq + 1));
  }
  return envHash(envFromMetadata(container).map((r) => ({ name: r.env, value: values.get(r.env) ?? '' })));
}

/** Parse the runtime-containers-meta annotation; undefined when absent or malformed. */
export function parseRuntimeContainerMetaSet(value: string | undefined): RuntimeContainerMetaSet | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    if (
      typeof parsed !== 'object' ||
      parsed === null ||
      !Array.isArray((parsed as RuntimeContainerMetaSet).containers)
    ) {
      return undefined;
    }
    return parsed as RuntimeContainerMetaSet;
  } catch {
    return undefined;
  }
}

export function parseInPlaceUpdateState(value: string | undefined): InPlaceUpdateState | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
