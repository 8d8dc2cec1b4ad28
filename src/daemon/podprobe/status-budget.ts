// The NodePodProbe status the agent writes, kept within a budget whatever the spec holds (pure). The object goes to
// etcd whole, spec and status together, under its 1.5 MiB request limit; the controller keeps the spec within 768 KiB
// (src/controller/podprobemarker/node-budget.ts), so the status gets STATUS_BUDGET_BYTES. Within it nothing changes;
// over it, first every message is cut to an equal share of what the rest leaves, then messages go altogether, then
// the last pods' entries (their results stay unwritten, and the count says how many). The same inputs always give the
// same status, so cutting never makes a write that changes nothing.
import type { NodePodProbeStatus, PodProbeStatus } from '../../api/nodepodprobe.js';

export const STATUS_BUDGET_BYTES = 512 * 1024;
/** A cut message ends with this. */
export const CUT_MARK = '…';
/** A message cut shorter than this goes altogether. */
const MIN_MESSAGE_CHARS = 16;

export interface BoundedStatus {
  status: NodePodProbeStatus;
  /** none: as built; messages: some cut; no-messages: all dropped; pods: also the last pods' entries left out. */
  cut: 'none' | 'messages' | 'no-messages' | 'pods';
  /** Pod entries left out (cut === 'pods'). */
  podsLeftOut: number;
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

function withMessages(pods: readonly PodProbeStatus[], cut: (message: string) => string | undefined): PodProbeStatus[] {
  return pods.map((pod) => ({
    ...pod,
    probeStates: (pod.probeStates ?? []).map((state) => {
      if (state.message === undefined) return state;
      const { message, ...rest } = state;
      const kept = cut(message);
      return kept === undefined ? rest : { ...rest, message: kept };
    }),
  }));
}

function cutTo(chars: number): (message: string) => string | undefined {
  return (message) => {
    const points = Array.from(message);
    if (points.length <= chars) return message;
    if (chars < MIN_MESSAGE_CHARS) return undefined;
    return points.slice(0, chars - 1).join('') + CUT_MARK;
  };
}

export function boundStatus(status: NodePodProbeStatus, budget = STATUS_BUDGET_BYTES): BoundedStatus {
  const pods = status.podProbeStatuses ?? [];
  if (jsonBytes(status) <= budget) return { status, cut: 'none', podsLeftOut: 0 };
  const bare = withMessages(pods, () => undefined);
  const bareBytes = jsonBytes({ podProbeStatuses: bare });
  const messages = pods.reduce((n, p) => n + (p.probeStates ?? []).filter((s) => s.message !== undefined).length, 0);
  if (bareBytes < budget && messages > 0) {
    // a share of the room left per message (bytes: at most 4 per character, plus the key and quotes)
    let chars = Math.floor((budget - bareBytes) / messages / 4) - 16;
    while (chars >= MIN_MESSAGE_CHARS) {
      const cut = { podProbeStatuses: withMessages(pods, cutTo(chars)) };
      if (jsonBytes(cut) <= budget) return { status: cut, cut: 'messages', podsLeftOut: 0 };
      chars = Math.floor(chars / 2);
    }
  }
  if (bareBytes <= budget) return { status: { podProbeStatuses: bare }, cut: 'no-messages', podsLeftOut: 0 };
  const kept: PodProbeStatus[] = [];
  let size = jsonBytes({ podProbeStatuses: [] });
  for (const pod of bare) {
    const add = jsonBytes(pod) + 1;
    if (size + add > budget) break;
    kept.push(pod);
    size += add;
  }
  return {
    status: kept.length > 0 ? { podProbeStatuses: kept } : {},
    cut: 'pods',
    podsLeftOut: bare.length - kept.length,
  };
}
