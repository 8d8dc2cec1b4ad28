// One network's allocation state, kept in one JSON file. Entries are keyed by IP, so an address is structurally
// held by at most one attachment or one reservation. Written only under the network's lock, by atomic replace.
import { isRecord } from '../util/is-record.js';

export interface PodIdentity {
  namespace: string;
  name: string;
  uid?: string;
}

/** The address is in use by a live attachment (sandbox + interface). */
export interface HeldEntry {
  kind: 'held';
  /** Key of the range set (its first subnet). */
  set: string;
  containerId: string;
  ifName: string;
  pod?: PodIdentity;
  /** reserved-ip-duration read at ADD (used by a DEL that comes without annotations). */
  reservedMinutes?: number;
  /** Length of a reservation minute when not 60 000 ms (ipam.testOnlyMinuteMs): GC by the agent applies it too. */
  minuteMs?: number;
  allocatedAt: number;
}

/** The address waits for a pod with the same namespace/name until `expiresAt`. */
export interface ReservedEntry {
  kind: 'reserved';
  set: string;
  pod: PodIdentity;
  /** The sandbox that released it (display only). */
  lastContainerId: string;
  ifName: string;
  minutes: number;
  releasedAt: number;
  expiresAt: number;
}

export type Entry = HeldEntry | ReservedEntry;

export type NoteKind = 'reused' | 'invalid-duration' | 'expired' | 'superseded' | 'no-pod-identity';

/** Something the agent turns into a metric and, for some kinds, an Event. */
export interface Note {
  kind: NoteKind;
  at: number;
  ip?: string;
  pod?: PodIdentity | undefined;
  containerId?: string;
  detail?: string;
}

export interface NetworkState {
  version: 1;
  /** IP (canonical text) → entry. */
  entries: Record<string, Entry>;
  /** Range set key → the last address handed out (allocation goes round-robin from there, like host-local). */
  last: Record<string, string>;
  /** Notes for the agent; bounded (oldest dropped). */
  notes: Note[];
}

export const MAX_NOTES = 256;

export function emptyState(): NetworkState {
  return { version: 1, entries: {}, last: {}, notes: [] };
}

/** Check the shape of a decoded state file; returns a reason when it is not one. */
export function stateProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object';
  if (value.version !== 1) return `unknown version ${JSON.stringify(value.version)}`;
  if (!isRecord(value.entries) || !isRecord(value.last) || !Array.isArray(value.notes)) return 'missing fields';
  for (const [ip, e] of Object.entries(value.entries)) {
    if (!isRecord(e) || typeof e.set !== 'string') return `entry ${ip} is malformed`;
    if (e.kind === 'held') {
      if (typeof e.containerId !== 'string' || typeof e.ifName !== 'string' || typeof e.allocatedAt !== 'number') {
        return `entry ${ip} is malformed`;
      }
    } else if (e.kind === 'reserved') {
      if (!isRecord(e.pod) || typeof e.expiresAt !== 'number' || typeof e.releasedAt !== 'number') {
        return `entry ${ip} is malformed`;
      }
    } else {
      return `entry ${ip} has kind ${JSON.stringify(e.kind)}`;
    }
  }
  return undefined;
}

export function addNote(state: NetworkState, note: Note): void {
  state.notes.push(note);
  if (state.notes.length > MAX_NOTES) state.notes.splice(0, state.notes.length - MAX_NOTES);
}

export function podKey(pod: PodIdentity): string {
  return `${pod.namespace}/${pod.name}`;
}
