// Size limits of a PodProbeMarker, checked at admission (not by the controller: a marker that got past admission is
// bounded by the NodePodProbe budget instead, src/controller/podprobemarker/node-budget.ts). Why these numbers:
// a marker's probes are copied into the NodePodProbe of every node one of its pods runs on, once per pod, and that
// object must stay under etcd's request limit (1.5 MiB by default). A kubelet runs at most 110 pods by default, so
// one marker may put at most MAX_POD_SHARE_BYTES into one pod's entry: 110 × (6 KiB + the entry's own ~0.4 KiB)
// ≈ 704 KiB, inside the controller's 768 KiB spec budget, which leaves room for the agent's bounded status.
// Kubernetes itself bounds a container name (63, a DNS label) but not a probe's command, path or headers (only the
// whole pod, by the same request limit); OpenKruise's webhook bounds none of these.
import { nodeProbeName } from './nodepodprobe.js';
import { fieldError } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { isRecord } from '../util/is-record.js';

export const MAX_PROBES_PER_MARKER = 16;
/** A probe name and a container name: a DNS label's length, as Kubernetes' container names. */
export const MAX_PROBE_NAME_LENGTH = 63;
export const MAX_CONTAINER_NAME_LENGTH = 63;
export const MAX_EXEC_ARGS = 64;
/** All the arguments of one exec command together, UTF-8 bytes. */
export const MAX_EXEC_COMMAND_BYTES = 2048;
/** httpGet path: the length most HTTP servers and proxies accept in a request line. */
export const MAX_HTTP_PATH_BYTES = 2048;
export const MAX_HTTP_HEADERS = 16;
export const MAX_HTTP_HEADER_NAME_BYTES = 256;
export const MAX_HTTP_HEADER_VALUE_BYTES = 1024;
/** What one marker adds to one pod's NodePodProbe entry (its probes as the agent gets them, JSON bytes). */
export const MAX_POD_SHARE_BYTES = 6 * 1024;

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

function tooLong(at: string, limit: number, unit: 'bytes' | 'characters', size: number): FieldError {
  return fieldError('FieldValueTooLong', at, `must have at most ${limit} ${unit} (has ${size})`);
}

function tooMany(at: string, limit: number, count: number): FieldError {
  return fieldError('FieldValueTooMany', at, `must have at most ${limit} items (has ${count})`);
}

/**
 * The probes as one pod's NodePodProbe entry gets them from this marker (named ports left as written): what the
 * pod-share limit measures, the same JSON the controller writes.
 */
export function podShareBytes(markerName: string, probes: readonly unknown[]): number {
  const entries = probes.filter(isRecord).map((p) => ({
    name: nodeProbeName(markerName, typeof p.name === 'string' ? p.name : ''),
    containerName: p.containerName,
    probe: p.probe,
    podProbeMarkerName: markerName,
  }));
  return bytes(JSON.stringify(entries));
}

/** The size errors of a marker's spec.probes (shape errors are validatePodProbeMarker's). */
export function probeSizeErrors(markerName: string, probes: readonly unknown[]): FieldError[] {
  const errors: FieldError[] = [];
  if (probes.length > MAX_PROBES_PER_MARKER) errors.push(tooMany('spec.probes', MAX_PROBES_PER_MARKER, probes.length));
  for (const [i, probe] of probes.entries()) {
    if (!isRecord(probe)) continue;
    const at = `spec.probes[${i}]`;
    if (typeof probe.name === 'string' && probe.name.length > MAX_PROBE_NAME_LENGTH) {
      errors.push(tooLong(`${at}.name`, MAX_PROBE_NAME_LENGTH, 'characters', probe.name.length));
    }
    if (typeof probe.containerName === 'string' && probe.containerName.length > MAX_CONTAINER_NAME_LENGTH) {
      errors.push(tooLong(`${at}.containerName`, MAX_CONTAINER_NAME_LENGTH, 'characters', probe.containerName.length));
    }
    if (isRecord(probe.probe)) errors.push(...handlerSizeErrors(probe.probe, `${at}.probe`));
  }
  const share = podShareBytes(markerName, probes);
  if (errors.length === 0 && share > MAX_POD_SHARE_BYTES) {
    errors.push(
      fieldError(
        'FieldValueTooLong',
        'spec.probes',
        `must have at most ${MAX_POD_SHARE_BYTES} bytes as NodePodProbe entries of one pod (has ${share}): ` +
          'every selected pod carries them in its node’s NodePodProbe',
      ),
    );
  }
  return errors;
}

function handlerSizeErrors(probe: Record<string, unknown>, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const exec = probe.exec;
  if (isRecord(exec) && Array.isArray(exec.command)) {
    const command = exec.command as unknown[];
    if (command.length > MAX_EXEC_ARGS) errors.push(tooMany(`${at}.exec.command`, MAX_EXEC_ARGS, command.length));
    const total = command.reduce<number>((n, arg) => n + (typeof arg === 'string' ? bytes(arg) : 0), 0);
    if (total > MAX_EXEC_COMMAND_BYTES)
      errors.push(tooLong(`${at}.exec.command`, MAX_EXEC_COMMAND_BYTES, 'bytes', total));
  }
  const http = probe.httpGet;
  if (!isRecord(http)) return errors;
  if (typeof http.path === 'string' && bytes(http.path) > MAX_HTTP_PATH_BYTES) {
    errors.push(tooLong(`${at}.httpGet.path`, MAX_HTTP_PATH_BYTES, 'bytes', bytes(http.path)));
  }
  if (!Array.isArray(http.httpHeaders)) return errors;
  const headers = http.httpHeaders as unknown[];
  if (headers.length > MAX_HTTP_HEADERS)
    errors.push(tooMany(`${at}.httpGet.httpHeaders`, MAX_HTTP_HEADERS, headers.length));
  for (const [j, header] of headers.entries()) {
    if (!isRecord(header)) continue;
    const where = `${at}.httpGet.httpHeaders[${j}]`;
    if (typeof header.name === 'string' && bytes(header.name) > MAX_HTTP_HEADER_NAME_BYTES) {
      errors.push(tooLong(`${where}.name`, MAX_HTTP_HEADER_NAME_BYTES, 'bytes', bytes(header.name)));
    }
    if (typeof header.value === 'string' && bytes(header.value) > MAX_HTTP_HEADER_VALUE_BYTES) {
      errors.push(tooLong(`${where}.value`, MAX_HTTP_HEADER_VALUE_BYTES, 'bytes', bytes(header.value)));
    }
  }
  return errors;
}
