// Launch priority at pod creation (pure): OpenKruise's mutating-webhook behaviour. A pod annotated
// `apps.kruise.io/container-launch-priority: Ordered` gets priorities by container order (0, -1, -2, ...); otherwise
// each container's env KRUISE_CONTAINER_PRIORITY (an integer in [-2147483647, 2147483647], default 0) is its
// priority. With two or more containers and at least two different priorities, every container gets env
// KRUISE_CONTAINER_BARRIER from ConfigMap `<pod>-barrier`, key `p_<priority>`, which the node agent releases level by
// level. A pod created with only generateName gets its name here (the barrier needs it), as OpenKruise does.
// Differences from OpenKruise, on purpose: a bad priority is denied with a message naming the container (OpenKruise
// answers 500 from strconv.Atoi and accepts any int); a user-set KRUISE_CONTAINER_BARRIER is replaced, not left in
// front of ours (kubelet resolves both, so a stale one would block the container); an unknown annotation value is
// ignored with a warning; init containers (native sidecars included) get no barrier, and one given to them is
// removed (withoutInitBarriers).
import {
  BARRIER_CONFIGMAP_SUFFIX,
  BARRIER_KEY_PREFIX,
  MAX_BARRIER_KEYS,
  CONTAINER_LAUNCH_BARRIER_ENV,
  CONTAINER_LAUNCH_ORDERED,
  CONTAINER_LAUNCH_PRIORITY_ANNOTATION,
  CONTAINER_LAUNCH_PRIORITY_ENV,
} from '../../../api/constants.js';
import { isRecord } from '../../../util/is-record.js';

export const MIN_PRIORITY = -2147483647;
export const MAX_PRIORITY = 2147483647;
/** A ConfigMap name is a DNS subdomain: at most 253 characters. */
const MAX_CONFIGMAP_NAME = 253;

/** The parts of an AdmissionRequest this handler reads (admission.k8s.io/v1). */
export interface PodAdmissionRequest {
  operation: string;
  resource: { group: string; version: string; resource: string };
  subResource?: string | undefined;
  namespace?: string | undefined;
  object?: unknown;
}

export type PodMutationResult =
  | { allowed: true; object?: Record<string, unknown>; warnings?: string[] }
  | { allowed: false; code: number; message: string };

export interface PodMutationOptions {
  /** Random integers in [0, n) for the generated name (default Math.random). */
  randomInt?: (n: number) => number;
}

type Json = Record<string, unknown>;

// apiserver's names.SimpleNameGenerator: base truncated to 58, plus 5 characters of this alphabet
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_BASE = 58;
const RANDOM_LENGTH = 5;

export function generatePodName(base: string, randomInt: (n: number) => number = defaultRandomInt): string {
  let name = base.length > MAX_GENERATED_BASE ? base.slice(0, MAX_GENERATED_BASE) : base;
  for (let i = 0; i < RANDOM_LENGTH; i++) name += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  return name;
}

function defaultRandomInt(n: number): number {
  return Math.floor(Math.random() * n);
}

/** A priority as the env value gives it, or a message saying why not. */
export function parsePriority(value: string): number | string {
  if (!/^[+-]?\d+$/.test(value)) return 'is not an integer';
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < MIN_PRIORITY || n > MAX_PRIORITY) {
    return `is outside [${MIN_PRIORITY}, ${MAX_PRIORITY}]`;
  }
  return n;
}

function deny(message: string): PodMutationResult {
  return { allowed: false, code: 400, message };
}

export function mutatePodForLaunchPriority(
  request: PodAdmissionRequest,
  options: PodMutationOptions = {},
): PodMutationResult {
  if (request.operation !== 'CREATE' || request.subResource) return { allowed: true };
  if (request.resource.group !== '' || request.resource.resource !== 'pods') return { allowed: true };
  const pod = request.object;
  if (!isRecord(pod) || !isRecord(pod.spec) || !Array.isArray(pod.spec.containers)) return { allowed: true };
  const containers = pod.spec.containers as unknown[];
  // a single container has nothing to be ordered against (OpenKruise skips it before reading any env)
  if (containers.length <= 1 || !containers.every(isRecord)) return { allowed: true };
  const metadata = isRecord(pod.metadata) ? pod.metadata : {};
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const warnings: string[] = [];

  const mode = annotations[CONTAINER_LAUNCH_PRIORITY_ANNOTATION];
  const ordered = mode === CONTAINER_LAUNCH_ORDERED;
  if (mode !== undefined && !ordered) {
    warnings.push(
      `annotation ${CONTAINER_LAUNCH_PRIORITY_ANNOTATION}: ${JSON.stringify(mode)} is not ${CONTAINER_LAUNCH_ORDERED}; ignored (env ${CONTAINER_LAUNCH_PRIORITY_ENV} decides)`,
    );
  }

  const priorities: number[] = [];
  for (const [index, container] of (containers as Json[]).entries()) {
    if (ordered) {
      priorities.push(index === 0 ? 0 : -index);
      continue;
    }
    const name = typeof container.name === 'string' ? container.name : `#${index}`;
    const env = Array.isArray(container.env) ? container.env : [];
    const entry = env.find((e): e is Json => isRecord(e) && e.name === CONTAINER_LAUNCH_PRIORITY_ENV);
    if (!entry) {
      priorities.push(0);
      continue;
    }
    if (typeof entry.value !== 'string') {
      return deny(
        `spec.containers[${index}] (container ${JSON.stringify(name)}): env ${CONTAINER_LAUNCH_PRIORITY_ENV} must be given as a value (an integer in [${MIN_PRIORITY}, ${MAX_PRIORITY}])`,
      );
    }
    const parsed = parsePriority(entry.value.trim() === entry.value ? entry.value : '');
    if (typeof parsed === 'string') {
      return deny(
        `spec.containers[${index}] (container ${JSON.stringify(name)}): env ${CONTAINER_LAUNCH_PRIORITY_ENV} ${JSON.stringify(entry.value)} ${parsed}; it must be an integer in [${MIN_PRIORITY}, ${MAX_PRIORITY}]`,
      );
    }
    priorities.push(parsed);
  }
  if (priorities.every((p) => p === priorities[0])) return { allowed: true, ...(warnings.length > 0 && { warnings }) };
  const levels = new Set(priorities).size;
  if (levels > MAX_BARRIER_KEYS) {
    return deny(
      `spec.containers: ${levels} distinct launch priorities; at most ${MAX_BARRIER_KEYS} (one barrier key each) are allowed`,
    );
  }

  let podName = typeof metadata.name === 'string' ? metadata.name : '';
  const newMetadata: Json = { ...metadata };
  if (!podName) {
    const base = typeof metadata.generateName === 'string' ? metadata.generateName : '';
    if (!base) return { allowed: true, ...(warnings.length > 0 && { warnings }) }; // the API server rejects it anyway
    podName = generatePodName(base, options.randomInt);
    newMetadata.name = podName;
  }
  const configMapName = `${podName}${BARRIER_CONFIGMAP_SUFFIX}`;
  if (configMapName.length > MAX_CONFIGMAP_NAME) {
    return deny(
      `metadata.name: the launch barrier ConfigMap ${configMapName.slice(0, 40)}... would be longer than ${MAX_CONFIGMAP_NAME} characters; use a pod name of at most ${MAX_CONFIGMAP_NAME - BARRIER_CONFIGMAP_SUFFIX.length}`,
    );
  }

  const newContainers = (containers as Json[]).map((container, index) => {
    const env = Array.isArray(container.env) ? container.env : [];
    const kept = env.filter((e) => !(isRecord(e) && e.name === CONTAINER_LAUNCH_BARRIER_ENV));
    if (kept.length !== env.length) {
      warnings.push(
        `spec.containers[${index}]: env ${CONTAINER_LAUNCH_BARRIER_ENV} is set by the launch-priority webhook; the given one was replaced`,
      );
    }
    kept.push({
      name: CONTAINER_LAUNCH_BARRIER_ENV,
      valueFrom: { configMapKeyRef: { name: configMapName, key: `${BARRIER_KEY_PREFIX}${priorities[index]}` } },
    });
    return { ...container, env: kept };
  });
  const spec: Json = { ...pod.spec, containers: newContainers };
  const initContainers = withoutInitBarriers(pod.spec.initContainers, warnings);
  if (initContainers) spec.initContainers = initContainers;
  return {
    allowed: true,
    object: { ...pod, metadata: newMetadata, spec },
    ...(warnings.length > 0 && { warnings }),
  };
}

/**
 * Init containers (native sidecars and plain ones) take no launch priority: kubelet starts them before every regular
 * container, so one waiting on a barrier key released only once regular containers are ready would block the pod for
 * good. A KRUISE_CONTAINER_BARRIER env given to one is removed and KRUISE_CONTAINER_PRIORITY is left, ignored; each
 * with a warning. Undefined when nothing changes.
 */
function withoutInitBarriers(initContainers: unknown, warnings: string[]): unknown[] | undefined {
  if (!Array.isArray(initContainers)) return undefined;
  let changed = false;
  const result = initContainers.map((container: unknown, index) => {
    if (!isRecord(container) || !Array.isArray(container.env)) return container;
    const env: unknown[] = container.env;
    const at = `spec.initContainers[${index}]`;
    if (env.some((e) => isRecord(e) && e.name === CONTAINER_LAUNCH_PRIORITY_ENV)) {
      warnings.push(
        `${at}: env ${CONTAINER_LAUNCH_PRIORITY_ENV} is ignored on an init container: kubelet starts init containers and native sidecars before every regular container`,
      );
    }
    const kept = env.filter((e) => !(isRecord(e) && e.name === CONTAINER_LAUNCH_BARRIER_ENV));
    if (kept.length === env.length) return container;
    changed = true;
    warnings.push(
      `${at}: env ${CONTAINER_LAUNCH_BARRIER_ENV} was removed: an init container or native sidecar waiting on a launch barrier would block the regular containers, which kubelet starts after it`,
    );
    return { ...container, env: kept };
  });
  return changed ? result : undefined;
}
