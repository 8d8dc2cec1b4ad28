// What a pod's launch barrier looks like, read from its spec alone (pure): the ConfigMap `<pod>-barrier`, the
// containers gated by an env KRUISE_CONTAINER_BARRIER from a key `p_<priority>` of it, grouped into levels by
// priority (highest first), and a problem for each container whose barrier env cannot be understood. A bad
// container never stops the others: it is left out of the ordering and reported. An init container (a native sidecar
// or a plain one) is never ordered: kubelet starts it before every regular container, so a barrier key it waits on
// (our webhook never gives it one; a user or another webhook may) is released with the first level, else the pod
// would wait forever (the regular containers wait for it, and it for them).
import { BARRIER_CONFIGMAP_SUFFIX, BARRIER_KEY_PREFIX, CONTAINER_LAUNCH_BARRIER_ENV } from '../../api/constants.js';
import { isRecord } from '../../util/is-record.js';

/** OpenKruise documents priorities in [-2147483647, 2147483647]. */
export const MIN_PRIORITY = -2147483647;
export const MAX_PRIORITY = 2147483647;

/** Containers sharing one priority: released together by writing every key they wait on. */
export interface BarrierLevel {
  priority: number;
  /** The ConfigMap keys the level's containers wait on (usually one, `p_<priority>`). */
  keys: string[];
  containers: string[];
}

export interface BarrierPlan {
  configMapName: string;
  /** Highest priority first; empty when no container is gated. */
  levels: BarrierLevel[];
  /** One line per container whose barrier env was ignored, naming the container. */
  problems: string[];
}

/** The subset of a pod the plan is read from (wire JSON, so every field is checked). */
export interface PodSpecLike {
  metadata?: { name?: string };
  spec?: { containers?: unknown; initContainers?: unknown } | undefined;
}

/** `p_<n>` → n, for a key Go's strconv.Atoi accepts after the prefix and inside the documented range. */
export function priorityOfKey(key: string): number | undefined {
  if (!key.startsWith(BARRIER_KEY_PREFIX)) return undefined;
  const digits = key.slice(BARRIER_KEY_PREFIX.length);
  if (!/^[+-]?\d{1,10}$/.test(digits)) return undefined;
  const n = Number(digits);
  return n >= MIN_PRIORITY && n <= MAX_PRIORITY ? n : undefined;
}

export function barrierConfigMapName(podName: string): string {
  return `${podName}${BARRIER_CONFIGMAP_SUFFIX}`;
}

/** Does the pod carry a barrier env at all (cheap check for informer handlers)? */
export function hasBarrierEnv(pod: PodSpecLike): boolean {
  const { containers, initContainers } = pod.spec ?? {};
  return [containers, initContainers].some(
    (list) => Array.isArray(list) && list.some((c) => barrierEnvOf(c) !== undefined),
  );
}

/** The first env entry named KRUISE_CONTAINER_BARRIER of a container (as kubelet would meet it), if any. */
function barrierEnvOf(container: unknown): Record<string, unknown> | undefined {
  if (!isRecord(container) || !Array.isArray(container.env)) return undefined;
  return container.env.find(
    (e): e is Record<string, unknown> => isRecord(e) && e.name === CONTAINER_LAUNCH_BARRIER_ENV,
  );
}

export function barrierPlan(pod: PodSpecLike): BarrierPlan {
  const configMapName = barrierConfigMapName(pod.metadata?.name ?? '');
  const problems: string[] = [];
  const byPriority = new Map<number, BarrierLevel>();
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  for (const container of containers) {
    const env = barrierEnvOf(container);
    if (!env || !isRecord(container)) continue;
    const name = typeof container.name === 'string' ? container.name : '?';
    const ref =
      isRecord(env.valueFrom) && isRecord(env.valueFrom.configMapKeyRef) ? env.valueFrom.configMapKeyRef : undefined;
    if (!ref) {
      problems.push(
        `container ${name}: env ${CONTAINER_LAUNCH_BARRIER_ENV} is not read from a ConfigMap key; not ordered`,
      );
      continue;
    }
    if (ref.name !== configMapName) {
      problems.push(
        `container ${name}: env ${CONTAINER_LAUNCH_BARRIER_ENV} reads ConfigMap ${JSON.stringify(ref.name)}, not ${configMapName}; not ordered`,
      );
      continue;
    }
    const key = typeof ref.key === 'string' ? ref.key : '';
    const priority = priorityOfKey(key);
    if (priority === undefined) {
      problems.push(
        `container ${name}: barrier key ${JSON.stringify(ref.key)} is not ${BARRIER_KEY_PREFIX}<integer in [${MIN_PRIORITY}, ${MAX_PRIORITY}]>; not ordered`,
      );
      continue;
    }
    let level = byPriority.get(priority);
    if (!level) {
      level = { priority, keys: [], containers: [] };
      byPriority.set(priority, level);
    }
    if (!level.keys.includes(key)) level.keys.push(key);
    level.containers.push(name);
  }
  const levels = [...byPriority.values()].sort((a, b) => b.priority - a.priority);
  const initKeys = initContainerKeys(pod, configMapName, problems);
  if (initKeys.length > 0) {
    const first = levels[0];
    if (first) first.keys.push(...initKeys.filter((k) => !first.keys.includes(k)));
    else levels.push({ priority: Math.max(...initKeys.map((k) => priorityOfKey(k)!)), keys: initKeys, containers: [] });
  }
  return { configMapName, levels, problems };
}

/** The keys of our ConfigMap that init containers wait on (each reported: it is released with the first level). */
function initContainerKeys(pod: PodSpecLike, configMapName: string, problems: string[]): string[] {
  const keys: string[] = [];
  const initContainers = Array.isArray(pod.spec?.initContainers) ? pod.spec.initContainers : [];
  for (const container of initContainers) {
    const env = barrierEnvOf(container);
    if (!env || !isRecord(container)) continue;
    const ref =
      isRecord(env.valueFrom) && isRecord(env.valueFrom.configMapKeyRef) ? env.valueFrom.configMapKeyRef : undefined;
    const key = ref && ref.name === configMapName && typeof ref.key === 'string' ? ref.key : undefined;
    if (key === undefined || priorityOfKey(key) === undefined) continue;
    if (!keys.includes(key)) keys.push(key);
    const name = typeof container.name === 'string' ? container.name : '?';
    problems.push(
      `init container ${name}: env ${CONTAINER_LAUNCH_BARRIER_ENV} (key ${key}) is released with the first level: ` +
        `kubelet starts init containers and native sidecars before every regular container, so they take no launch ` +
        `priority (regular containers waiting on the same key start early)`,
    );
  }
  return keys;
}

/** The keys of a barrier ConfigMap's data that are set (any value; odd keys are simply never matched). */
export function presentKeys(data: unknown): Set<string> {
  const keys = new Set<string>();
  if (!isRecord(data)) return keys;
  for (const [key, value] of Object.entries(data)) if (typeof value === 'string') keys.add(key);
  return keys;
}

/** Is every key of the level present? */
export function isReleased(level: BarrierLevel, keys: ReadonlySet<string>): boolean {
  return level.keys.every((k) => keys.has(k));
}
