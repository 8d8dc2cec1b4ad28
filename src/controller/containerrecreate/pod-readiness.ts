// The KruisePodReady readiness gate as OpenKruise uses it to hold a pod not-ready (reference §1.5): the condition's
// message is a JSON list of {userAgent, key} sorted by (userAgent, key); the condition is False while the list is
// not empty and True when it empties; Ready is recomputed when kubelet's Ready and ContainersReady are there.
import { KRUISE_POD_READY_CONDITION } from '../../api/constants.js';
import type { WirePod, WirePodCondition } from '../../api/wire.js';

export interface NotReadyEntry {
  userAgent: string;
  key: string;
}

export const CRR_USER_AGENT = 'ContainerRecreateRequest';

export function hasKruisePodReadyGate(pod: WirePod): boolean {
  return (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === KRUISE_POD_READY_CONDITION);
}

function parseEntries(message: string | undefined): NotReadyEntry[] {
  try {
    const parsed = JSON.parse(message ?? '[]') as unknown;
    return Array.isArray(parsed)
      ? parsed.filter(
          (e): e is NotReadyEntry =>
            typeof e === 'object' &&
            e !== null &&
            typeof (e as NotReadyEntry).userAgent === 'string' &&
            typeof (e as NotReadyEntry).key === 'string',
        )
      : [];
  } catch {
    return [];
  }
}

function dump(entries: NotReadyEntry[]): string {
  const sorted = [...entries].sort((a, b) => a.userAgent.localeCompare(b.userAgent) || a.key.localeCompare(b.key));
  return JSON.stringify(sorted.map((e) => ({ userAgent: e.userAgent, key: e.key })));
}

/** Ready = False (ReadinessGatesNotReady) when a gate condition is not True, when kubelet's conditions exist. */
function recomputeReady(pod: WirePod, conditions: WirePodCondition[], now: string): void {
  const ready = conditions.find((c) => c.type === 'Ready');
  const containersReady = conditions.find((c) => c.type === 'ContainersReady');
  if (!ready || containersReady?.status !== 'True') return;
  const notTrue = (pod.spec?.readinessGates ?? [])
    .map((g) => ({ type: g.conditionType, status: conditions.find((c) => c.type === g.conditionType)?.status ?? '' }))
    .filter((g) => g.status !== 'True');
  const status = notTrue.length > 0 ? 'False' : 'True';
  if (ready.status !== status) {
    ready.status = status;
    ready.lastTransitionTime = now;
  }
  if (notTrue.length > 0) {
    ready.reason = 'ReadinessGatesNotReady';
    ready.message = notTrue
      .map((g) => `the status of pod readiness gate "${g.type}" is not "True", but ${g.status}`)
      .join(', ');
  } else {
    delete ready.reason;
    delete ready.message;
  }
}

/** The pod's conditions with `entry` added (condition False); undefined when already there or the pod has no gate. */
export function addNotReadyKey(pod: WirePod, entry: NotReadyEntry, now: string): WirePodCondition[] | undefined {
  if (!hasKruisePodReadyGate(pod)) return undefined;
  const conditions = structuredClone(pod.status?.conditions ?? []);
  let condition = conditions.find((c) => c.type === KRUISE_POD_READY_CONDITION);
  const entries = parseEntries(condition?.message);
  if (
    condition &&
    condition.status !== 'True' &&
    entries.some((e) => e.userAgent === entry.userAgent && e.key === entry.key)
  ) {
    return undefined;
  }
  entries.push(entry);
  if (!condition) {
    condition = { type: KRUISE_POD_READY_CONDITION, status: 'False', lastTransitionTime: now };
    conditions.push(condition);
  }
  condition.status = 'False';
  condition.message = dump(entries);
  condition.lastTransitionTime = now;
  recomputeReady(pod, conditions, now);
  return conditions;
}

/** The pod's conditions with `entry` removed (True when none is left); undefined when it was not there. */
export function removeNotReadyKey(pod: WirePod, entry: NotReadyEntry, now: string): WirePodCondition[] | undefined {
  const conditions = structuredClone(pod.status?.conditions ?? []);
  const condition = conditions.find((c) => c.type === KRUISE_POD_READY_CONDITION);
  if (!condition) return undefined;
  const entries = parseEntries(condition.message);
  const left = entries.filter((e) => !(e.userAgent === entry.userAgent && e.key === entry.key));
  if (left.length === entries.length) return undefined;
  condition.message = dump(left);
  if (left.length === 0) condition.status = 'True';
  condition.lastTransitionTime = now;
  return conditions;
}
