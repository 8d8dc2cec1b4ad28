// The NodePodProbe budget (pure): which markers' probes a node's NodePodProbe carries when together they would not
// fit. etcd refuses a request over 1.5 MiB (its --max-request-bytes default), and the object holds the agent's status
// too, so the spec gets SPEC_BUDGET_BYTES and the agent bounds its status (src/daemon/podprobe/status-budget.ts).
// The choice: markers in order of age (oldest first, then by `<namespace>/<name>`), each kept if its share still fits
// in what the older ones left; one that does not fit is left out whole (never some of its pods or probes) and the
// younger ones still get their turn. Oldest first because probes that run are never pushed out by a marker created
// after them (a tenant cannot evict another by creating one), the outcome does not flap as sizes change a little,
// and it is the order quota admission uses; a marker that alone exceeds the budget never blocks the others.
// A marker's share on a node is the JSON of its entries for its pods there, each counted with the pod entry's own
// fields (name, namespace, uid, IP): more than it adds when markers share a pod, so what is kept always fits.
import { PROBES_LEFT_OUT_CONDITION, type PodProbeMarkerCondition } from '../../api/podprobemarker.js';

/** What one NodePodProbe spec may hold, bytes of JSON (of 1.5 MiB: the rest for the status and metadata). */
export const SPEC_BUDGET_BYTES = 768 * 1024;

export interface MarkerShare {
  /** `<namespace>/<name>`. */
  key: string;
  /** metadata.creationTimestamp (RFC 3339; whole seconds, so the key breaks ties). */
  createdAt: string;
  bytes: number;
}

export interface LeftOut {
  /** The marker's share on the node. */
  bytes: number;
  /** What the older markers left of the budget when its turn came. */
  free: number;
}

export interface BudgetDecision {
  budget: number;
  /** Bytes of the markers kept. */
  used: number;
  /** The markers left out, by key. */
  leftOut: Map<string, LeftOut>;
}

function byAge(a: MarkerShare, b: MarkerShare): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

export function fitMarkers(shares: readonly MarkerShare[], budget = SPEC_BUDGET_BYTES): BudgetDecision {
  let used = 0;
  const leftOut = new Map<string, LeftOut>();
  for (const share of [...shares].sort(byAge)) {
    if (used + share.bytes <= budget) used += share.bytes;
    else leftOut.set(share.key, { bytes: share.bytes, free: budget - used });
  }
  return { budget, used, leftOut };
}

/** Bytes as people read them: 1,234 B, 12.1 KiB, 1.50 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

/** Why a marker was left out of a node, for the event and the condition. */
export interface NodeLeftOut extends LeftOut {
  node: string;
}

const NODES_NAMED = 5;

/** One line for every node a marker was left out of (the first few named, sorted). */
export function leftOutMessage(nodes: readonly NodeLeftOut[], budget = SPEC_BUDGET_BYTES): string {
  const sorted = [...nodes].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  const named = sorted
    .slice(0, NODES_NAMED)
    .map((n) => `${n.node} (its probes there: ${formatBytes(n.bytes)}; ${formatBytes(Math.max(0, n.free))} free)`);
  const more = sorted.length > NODES_NAMED ? ` and ${sorted.length - NODES_NAMED} more` : '';
  return (
    `probes left out of the NodePodProbe of ${sorted.length} node${sorted.length === 1 ? '' : 's'}: ` +
    `${named.join(', ')}${more}; a NodePodProbe's spec may hold ${formatBytes(budget)} ` +
    '(older markers first), so the pods there get no results from this marker'
  );
}

export const REASON_NODE_POD_PROBE_BUDGET = 'NodePodProbeBudget';
export const REASON_ALL_PLACED = 'AllPlaced';

/**
 * The marker's conditions with ProbesLeftOut as `nodes` says: True with the message while some node left it out,
 * False once none does (absent if it never was True). lastTransitionTime moves only when the status does.
 * Undefined when nothing changes.
 */
export function leftOutConditions(
  previous: readonly PodProbeMarkerCondition[] | undefined,
  nodes: readonly NodeLeftOut[],
  now: string,
  budget = SPEC_BUDGET_BYTES,
): PodProbeMarkerCondition[] | undefined {
  const list = previous ?? [];
  const have = list.find((c) => c.type === PROBES_LEFT_OUT_CONDITION);
  if (!have && nodes.length === 0) return undefined;
  const want: PodProbeMarkerCondition =
    nodes.length > 0
      ? {
          type: PROBES_LEFT_OUT_CONDITION,
          status: 'True',
          reason: REASON_NODE_POD_PROBE_BUDGET,
          message: leftOutMessage(nodes, budget),
        }
      : { type: PROBES_LEFT_OUT_CONDITION, status: 'False', reason: REASON_ALL_PLACED, message: '' };
  if (have && have.status === want.status && have.reason === want.reason && have.message === want.message) {
    return undefined;
  }
  want.lastTransitionTime = have && have.status === want.status ? (have.lastTransitionTime ?? now) : now;
  return [...list.filter((c) => c.type !== PROBES_LEFT_OUT_CONDITION), want];
}
