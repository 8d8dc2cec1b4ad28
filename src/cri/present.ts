// What `kruise-daemon cri ...` shows: pure functions from CRI answers to aligned tables (for humans) and to
// plain JSON documents (for scripts). No I/O here, and time comes in as an argument, so tests pin the output.
import type {
  Container__Output,
  Image__Output,
  PodSandbox__Output,
  StatusResponse__Output,
  VersionResponse__Output,
} from './types.js';

/** Columns separated by three spaces, each as wide as its widest cell; no trailing spaces. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    headers
      .map((_, i) => (i === headers.length - 1 ? (cells[i] ?? '') : (cells[i] ?? '').padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** Key/value lines with the values aligned. */
export function renderPairs(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}   ${v}`.trimEnd()).join('\n') + '\n';
}

/** Bytes in binary units with one decimal ("1.4 MiB"); "-" when not a number. */
export function formatBytes(bytes: number | string): string {
  const n = typeof bytes === 'string' ? Number(bytes) : bytes;
  if (!Number.isFinite(n) || n < 0) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** Nanoseconds since the epoch (decimal string, as CRI gives them) to ms; undefined when unset or invalid. */
export function nanosToMillis(nanos: string | number): number | undefined {
  try {
    const n = BigInt(typeof nanos === 'number' ? Math.trunc(nanos) : nanos.trim() || '0');
    return n > 0n ? Number(n / 1_000_000n) : undefined;
  } catch {
    return undefined;
  }
}

/** "12s ago", "5m ago", "3h ago", "2d ago"; "-" when unknown. */
export function formatAge(createdMs: number | undefined, nowMs: number): string {
  if (createdMs === undefined) return '-';
  const seconds = Math.max(0, Math.floor((nowMs - createdMs) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

/** First 13 hex digits of an ID, without a "sha256:" prefix (as crictl shows them). */
export function shortId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 13);
}

/** "SANDBOX_READY" -> "Ready", "CONTAINER_EXITED" -> "Exited". */
export function stateWord(state: string): string {
  const word = state.replace(/^(SANDBOX|CONTAINER)_/, '').toLowerCase();
  return word === 'notready' ? 'NotReady' : word.charAt(0).toUpperCase() + word.slice(1);
}

function isoOrNull(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

// ---------------------------------------------------------------------------------------------------- info

export interface InfoDocument {
  socket: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
  conditions: { type: string; status: boolean; reason: string; message: string }[];
}

export function infoDocument(
  socket: string,
  version: VersionResponse__Output,
  status: StatusResponse__Output | undefined,
): InfoDocument {
  return {
    socket,
    runtimeName: version.runtime_name,
    runtimeVersion: version.runtime_version,
    runtimeApiVersion: version.runtime_api_version,
    conditions: (status?.status?.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
    })),
  };
}

export function renderInfo(info: InfoDocument): string {
  const pairs: [string, string][] = [
    ['Socket', info.socket],
    ['Runtime', info.runtimeName],
    ['Runtime version', info.runtimeVersion],
    ['CRI API version', info.runtimeApiVersion],
  ];
  for (const c of info.conditions) {
    const why = [c.reason, c.message].filter(Boolean).join(': ');
    pairs.push([c.type, why ? `${c.status} (${why})` : String(c.status)]);
  }
  return renderPairs(pairs);
}

// ---------------------------------------------------------------------------------------------------- images

export interface ImageDocument {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  pinned: boolean;
}

export function imageDocuments(images: readonly Image__Output[]): ImageDocument[] {
  return images.map((i) => ({
    id: i.id,
    repoTags: [...i.repo_tags],
    repoDigests: [...i.repo_digests],
    size: Number(i.size),
    pinned: i.pinned,
  }));
}

/** Split "registry:5000/name:tag" into name and tag (the tag is after the last ":" that follows the last "/"). */
function splitTag(reference: string): [string, string] {
  const colon = reference.lastIndexOf(':');
  return colon > reference.lastIndexOf('/') ? [reference.slice(0, colon), reference.slice(colon + 1)] : [reference, ''];
}

/** One row per tag (an untagged image shows its digest's name and <none>), sorted by name and tag. */
export function renderImages(images: readonly ImageDocument[]): string {
  const rows: string[][] = [];
  for (const image of images) {
    const id = shortId(image.id);
    const size = formatBytes(image.size);
    if (image.repoTags.length === 0) {
      const name = image.repoDigests[0]?.split('@')[0] ?? '<none>';
      rows.push([name, '<none>', id, size]);
    }
    for (const tag of image.repoTags) rows.push([...splitTag(tag), id, size]);
  }
  rows.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? '') || (a[1] ?? '').localeCompare(b[1] ?? ''));
  return renderTable(['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'], rows);
}

// ---------------------------------------------------------------------------------------------------- ps

export interface SandboxDocument {
  id: string;
  namespace: string;
  name: string;
  uid: string;
  attempt: number;
  state: string;
  createdAt: string | null;
  runtimeHandler: string;
}

export interface ContainerDocument {
  id: string;
  podSandboxId: string;
  name: string;
  attempt: number;
  state: string;
  image: string;
  imageRef: string;
  createdAt: string | null;
}

export interface PsDocument {
  sandboxes: SandboxDocument[];
  containers: ContainerDocument[];
}

export function psDocument(
  sandboxes: readonly PodSandbox__Output[],
  containers: readonly Container__Output[],
): PsDocument {
  const byCreation = <T extends { created_at: string }>(a: T, b: T): number =>
    (nanosToMillis(b.created_at) ?? 0) - (nanosToMillis(a.created_at) ?? 0);
  return {
    sandboxes: [...sandboxes].sort(byCreation).map((s) => ({
      id: s.id,
      namespace: s.metadata?.namespace ?? '',
      name: s.metadata?.name ?? '',
      uid: s.metadata?.uid ?? '',
      attempt: s.metadata?.attempt ?? 0,
      state: s.state,
      createdAt: isoOrNull(nanosToMillis(s.created_at)),
      runtimeHandler: s.runtime_handler,
    })),
    containers: [...containers].sort(byCreation).map((c) => ({
      id: c.id,
      podSandboxId: c.pod_sandbox_id,
      name: c.metadata?.name ?? '',
      attempt: c.metadata?.attempt ?? 0,
      state: c.state,
      image: c.image?.image ?? '',
      imageRef: c.image_ref,
      createdAt: isoOrNull(nanosToMillis(c.created_at)),
    })),
  };
}

function ageOf(iso: string | null, nowMs: number): string {
  return formatAge(iso === null ? undefined : Date.parse(iso), nowMs);
}

/** Two tables: pod sandboxes, then containers with the pod they belong to. */
export function renderPs(ps: PsDocument, nowMs: number): string {
  const podName = new Map(ps.sandboxes.map((s) => [s.id, `${s.namespace}/${s.name}`]));
  const sandboxes =
    ps.sandboxes.length === 0
      ? 'No pod sandboxes.\n'
      : renderTable(
          ['POD ID', 'POD', 'STATE', 'CREATED', 'ATTEMPT'],
          ps.sandboxes.map((s) => [
            shortId(s.id),
            `${s.namespace}/${s.name}`,
            stateWord(s.state),
            ageOf(s.createdAt, nowMs),
            String(s.attempt),
          ]),
        );
  const containers =
    ps.containers.length === 0
      ? 'No containers.\n'
      : renderTable(
          ['CONTAINER ID', 'NAME', 'STATE', 'POD ID', 'POD', 'IMAGE', 'CREATED', 'ATTEMPT'],
          ps.containers.map((c) => [
            shortId(c.id),
            c.name,
            stateWord(c.state),
            shortId(c.podSandboxId),
            podName.get(c.podSandboxId) ?? '-',
            c.image,
            ageOf(c.createdAt, nowMs),
            String(c.attempt),
          ]),
        );
  return `${sandboxes}\n${containers}`;
}
