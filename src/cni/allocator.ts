// The allocation rules, as pure functions over a NetworkState (the caller holds the lock and writes the result).
//
// ADD: an attachment that already holds addresses gets them again (idempotent). Otherwise, per range set: a live
// reservation for the pod's namespace/name is handed over (whatever the new UID or sandbox id), else the next free
// address after the last one handed out. DEL: the attachment's addresses become reservations for the pod's
// namespace/name when a duration applies, else they are freed; a DEL for an unknown attachment is a no-op.
// Reservations end at expiresAt (expire() frees them; every call runs it first).
import { MINUTE_MS, type IpamConfig, type RangeSet } from './config.js';
import { CniCode, CniError } from './errors.js';
import { formatIp, formatNetwork, parseIp } from './ip.js';
import { addNote, podKey, type HeldEntry, type NetworkState, type PodIdentity, type ReservedEntry } from './state.js';

export interface Attachment {
  containerId: string;
  ifName: string;
}

export interface Assigned {
  ip: string;
  set: string;
  reused: boolean;
}

/** Free reservations whose time is up; returns the freed ones. */
export function expire(state: NetworkState, now: number): Array<{ ip: string; entry: ReservedEntry }> {
  const freed: Array<{ ip: string; entry: ReservedEntry }> = [];
  for (const [ip, entry] of Object.entries(state.entries)) {
    if (entry.kind === 'reserved' && entry.expiresAt <= now) {
      delete state.entries[ip];
      freed.push({ ip, entry });
      addNote(state, { kind: 'expired', at: now, ip, pod: entry.pod });
    }
  }
  return freed;
}

export function heldBy(state: NetworkState, a: Attachment): Array<{ ip: string; entry: HeldEntry }> {
  const out: Array<{ ip: string; entry: HeldEntry }> = [];
  for (const [ip, entry] of Object.entries(state.entries)) {
    if (entry.kind === 'held' && entry.containerId === a.containerId && entry.ifName === a.ifName) {
      out.push({ ip, entry });
    }
  }
  return out;
}

/** Whether an address may be handed out from this set (inside a range, not its gateway). */
export function usableIn(set: RangeSet, ipText: string): boolean {
  const ip = parseIp(ipText);
  if (!ip || ip.family !== set.family) return false;
  return set.ranges.some((r) => ip.value >= r.start && ip.value <= r.end && ip.value !== r.gateway.value);
}

function reservationFor(
  state: NetworkState,
  set: RangeSet,
  pod: PodIdentity,
): { ip: string; entry: ReservedEntry } | undefined {
  let best: { ip: string; entry: ReservedEntry } | undefined;
  for (const [ip, entry] of Object.entries(state.entries)) {
    if (entry.kind !== 'reserved' || entry.set !== set.key || podKey(entry.pod) !== podKey(pod)) continue;
    if (!best || entry.releasedAt > best.entry.releasedAt) best = { ip, entry };
  }
  return best;
}

/** The next free address of a set, round-robin after the last one handed out (like host-local). */
function nextFree(state: NetworkState, set: RangeSet): string | undefined {
  const lastText = state.last[set.key];
  const last = lastText !== undefined ? parseIp(lastText) : undefined;
  const n = set.ranges.length;
  const i =
    last && last.family === set.family ? set.ranges.findIndex((r) => last.value >= r.start && last.value <= r.end) : -1;
  const segments: Array<[number, bigint, bigint]> = [];
  if (i < 0 || !last) {
    set.ranges.forEach((r, k) => segments.push([k, r.start, r.end]));
  } else {
    segments.push([i, last.value + 1n, set.ranges[i]!.end]);
    for (let k = 1; k < n; k++) {
      const r = set.ranges[(i + k) % n]!;
      segments.push([(i + k) % n, r.start, r.end]);
    }
    segments.push([i, set.ranges[i]!.start, last.value]);
  }
  for (const [k, from, to] of segments) {
    const gateway = set.ranges[k]!.gateway.value;
    for (let v = from; v <= to; v++) {
      if (v === gateway) continue;
      const text = formatIp({ family: set.family, value: v });
      if (state.entries[text] === undefined) return text;
    }
  }
  return undefined;
}

export function freeCount(state: NetworkState, set: RangeSet): bigint {
  let total = 0n;
  for (const r of set.ranges) {
    total += r.end - r.start + 1n;
    if (r.gateway.value >= r.start && r.gateway.value <= r.end) total -= 1n;
  }
  for (const [ip, e] of Object.entries(state.entries)) if (e.set === set.key && usableIn(set, ip)) total -= 1n;
  return total;
}

export interface AddRequest extends Attachment {
  pod: PodIdentity | undefined;
  /** A valid reserved-ip-duration of the new pod, if any. */
  reservedMinutes: number | undefined;
  /** The configuration's minute length (tests shorten it). */
  minuteMs?: number;
}

/** ADD: one address per range set. Throws CniError(rangeFull) when a set has no free address (nothing changes). */
export function assign(state: NetworkState, config: IpamConfig, req: AddRequest, now: number): Assigned[] {
  const existing = heldBy(state, req);
  if (existing.length > 0) {
    return config.rangeSets
      .map((set) => existing.find((e) => e.entry.set === set.key))
      .filter((e) => e !== undefined)
      .map((e) => ({ ip: e.ip, set: e.entry.set, reused: false }));
  }
  const planned: Array<{ ip: string; set: RangeSet; reused: ReservedEntry | undefined }> = [];
  for (const set of config.rangeSets) {
    const reservation = req.pod ? reservationFor(state, set, req.pod) : undefined;
    if (reservation && usableIn(set, reservation.ip)) {
      planned.push({ ip: reservation.ip, set, reused: reservation.entry });
      continue;
    }
    if (reservation) {
      // the configured ranges no longer hold it: it cannot be handed out, so it is freed
      delete state.entries[reservation.ip];
      addNote(state, {
        kind: 'superseded',
        at: now,
        ip: reservation.ip,
        pod: reservation.entry.pod,
        detail: `outside the ranges of ${set.key}`,
      });
    }
    const ip = nextFree(state, set);
    if (ip === undefined) {
      throw new CniError(
        CniCode.rangeFull,
        `no free address left in range set ${set.ranges.map((r) => formatNetwork(r.subnet)).join(',')}`,
      );
    }
    planned.push({ ip, set, reused: undefined });
    // claim it now so a later set of the same family cannot pick it
    state.entries[ip] = held(set, req, now);
  }
  for (const p of planned) {
    state.entries[p.ip] = held(p.set, req, now);
    if (p.reused) {
      addNote(state, {
        kind: 'reused',
        at: now,
        ip: p.ip,
        pod: req.pod,
        containerId: req.containerId,
        detail: `released by sandbox ${p.reused.lastContainerId.slice(0, 12)}`,
      });
    } else {
      state.last[p.set.key] = p.ip;
    }
  }
  return planned.map((p) => ({ ip: p.ip, set: p.set.key, reused: p.reused !== undefined }));
}

function held(set: RangeSet, req: AddRequest, now: number): HeldEntry {
  const entry: HeldEntry = {
    kind: 'held',
    set: set.key,
    containerId: req.containerId,
    ifName: req.ifName,
    allocatedAt: now,
  };
  if (req.pod) entry.pod = req.pod;
  if (req.reservedMinutes !== undefined) entry.reservedMinutes = req.reservedMinutes;
  if (req.minuteMs !== undefined && req.minuteMs !== MINUTE_MS) entry.minuteMs = req.minuteMs;
  return entry;
}

export interface ReleaseOutcome {
  ip: string;
  reserved: boolean;
}

/**
 * DEL (and GC): release what the attachment holds. `minutes` = the duration to apply; undefined = the one recorded at
 * ADD. A pod identity is needed to reserve; without one the address is freed.
 */
export function release(
  state: NetworkState,
  a: Attachment,
  minutes: number | undefined,
  minuteMs: number,
  now: number,
): ReleaseOutcome[] {
  const out: ReleaseOutcome[] = [];
  for (const { ip, entry } of heldBy(state, a)) {
    const duration = minutes ?? entry.reservedMinutes;
    if (duration === undefined || duration <= 0 || !entry.pod) {
      delete state.entries[ip];
      out.push({ ip, reserved: false });
      continue;
    }
    // one reservation per pod name and set: an older one is freed
    for (const [otherIp, other] of Object.entries(state.entries)) {
      if (other.kind === 'reserved' && other.set === entry.set && podKey(other.pod) === podKey(entry.pod)) {
        delete state.entries[otherIp];
        addNote(state, { kind: 'superseded', at: now, ip: otherIp, pod: other.pod, detail: `replaced by ${ip}` });
      }
    }
    state.entries[ip] = {
      kind: 'reserved',
      set: entry.set,
      pod: entry.pod,
      lastContainerId: entry.containerId,
      ifName: entry.ifName,
      minutes: duration,
      releasedAt: now,
      expiresAt: now + duration * (entry.minuteMs ?? minuteMs),
    };
    out.push({ ip, reserved: true });
  }
  return out;
}

/** GC: release every held address whose attachment is not in `valid` (and, if given, older than `olderThan`). */
export function collect(
  state: NetworkState,
  valid: (a: Attachment) => boolean,
  minuteMs: number,
  now: number,
  olderThan = Number.POSITIVE_INFINITY,
): ReleaseOutcome[] {
  const stale = new Map<string, Attachment>();
  for (const entry of Object.values(state.entries)) {
    if (entry.kind !== 'held' || entry.allocatedAt >= olderThan) continue;
    const a = { containerId: entry.containerId, ifName: entry.ifName };
    if (!valid(a)) stale.set(`${a.containerId}/${a.ifName}`, a);
  }
  return [...stale.values()].flatMap((a) => release(state, a, undefined, minuteMs, now));
}
