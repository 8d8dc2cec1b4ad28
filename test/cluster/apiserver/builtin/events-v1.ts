// events.k8s.io/v1 Event: the same stored objects as core/v1 Event, with the fields renamed as kube does
// (regarding ↔ involvedObject, note ↔ message, deprecatedCount ↔ count, ...).
import type { KubeObject } from '../types.js';
import { eventResource, eventTable } from './core.js';
import { builtinResource } from './meta.js';

/** events.k8s.io/v1 name → core/v1 name; the rest (reason, type, action, eventTime, series, related...) match. */
const RENAMES: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function rename(obj: KubeObject, from: 0 | 1, apiVersion: string): KubeObject {
  const out: KubeObject = { ...obj, apiVersion, kind: 'Event' };
  for (const pair of RENAMES) {
    const src = pair[from];
    const dst = pair[1 - from]!;
    delete out[dst];
    if (obj[src] !== undefined) out[dst] = obj[src];
    if (src !== dst) delete out[src];
  }
  return out;
}

export const eventsV1Resource = builtinResource({
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
  shortNames: ['ev'],
  storageKey: eventResource.storageKey,
  table: eventTable,
  behaviour: eventResource.behaviour,
  fromStorage: (stored) => rename(stored, 1, 'events.k8s.io/v1'),
  toStorage: (external) => rename(external, 0, 'v1'),
});
