// Test bench of the PodProbeMarker and NodePodProbe controllers: a fake API (objects by resource/namespace/name,
// resourceVersions, a 409 for a write whose resourceVersion is not the stored one, merge patches applied, every
// write recorded), informer caches the test fills (sync() copies the API's objects in, so a test decides how stale
// a cache is), a FakeClock and recorded events.
import { NODE_POD_PROBE_CLEANUP_FINALIZER } from '../../../src/api/constants.js';
import { NODE_POD_PROBES, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import { POD_PROBE_MARKERS, type PodProbeMarker } from '../../../src/api/podprobemarker.js';
import type { WireNode, WirePod } from '../../../src/api/wire.js';
import { NodePodProbeController } from '../../../src/controller/nodepodprobe/controller.js';
import { PodProbeMarkerController } from '../../../src/controller/podprobemarker/controller.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import {
  byNodeName,
  markerKeysOf,
  NPP_MARKER_INDEX,
  POD_NODE_INDEX,
} from '../../../src/controller/shared/pod-probes.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { EventRecorder } from '../../../src/kube/event-recorder.js';
import { Informer, type ListWatcher } from '../../../src/kube/informer/informer.js';
import { byNamespace, NAMESPACE_INDEX } from '../../../src/kube/informer/store.js';
import { applyMergePatch } from '../../../src/kube/merge-patch.js';
import { OWN_WRITE_DEADLINE_MS } from '../../../src/kube/own-writes.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources, type ResourceType } from '../../../src/kube/resource.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';

export interface Write {
  verb: 'create' | 'update' | 'patch' | 'delete';
  resource: string;
  name: string;
  subresource?: string | undefined;
  body?: unknown;
}

const notFound = (name: string): ApiError =>
  new ApiError({ code: 404, reason: 'NotFound', message: `${name} not found` }, 'GET', name);
const conflict = (name: string): ApiError =>
  new ApiError({ code: 409, reason: 'Conflict', message: `${name}: the object has been modified` }, 'PUT', name);

export class FakeApi {
  readonly writes: Write[] = [];
  readonly objects = new Map<string, KubeObject>();
  private rv = 100;

  private key(rt: ResourceType, ns: string | undefined, name: string): string {
    return `${rt.resource}/${rt.namespaced ? (ns ?? '') : ''}/${name}`;
  }

  /** Store an object as the API would (a new resourceVersion); returns it. */
  put<T extends KubeObject>(rt: ResourceType, obj: T): T {
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.rv) };
    this.objects.set(this.key(rt, obj.metadata?.namespace, obj.metadata?.name ?? ''), stored);
    return structuredClone(stored);
  }

  read<T extends KubeObject>(rt: ResourceType, name: string, namespace?: string): T | undefined {
    const o = this.objects.get(this.key(rt, namespace, name));
    return o ? (structuredClone(o) as T) : undefined;
  }

  all<T extends KubeObject>(rt: ResourceType): T[] {
    const prefix = `${rt.resource}/`;
    return [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, o]) => structuredClone(o) as T);
  }

  remove(rt: ResourceType, name: string, namespace?: string): void {
    this.objects.delete(this.key(rt, namespace, name));
  }

  writesOf(resource: string, verb?: Write['verb']): Write[] {
    return this.writes.filter((w) => w.resource === resource && (verb === undefined || w.verb === verb));
  }

  get<T extends KubeObject>(rt: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<T> {
    const o = this.read<T>(rt, name, opts.namespace);
    return o ? Promise.resolve(o) : Promise.reject(notFound(name));
  }

  create<T extends KubeObject>(rt: ResourceType, obj: T, opts: { namespace?: string } = {}): Promise<T> {
    const name = obj.metadata?.name ?? '';
    this.writes.push({ verb: 'create', resource: rt.resource, name, body: obj });
    if (this.read(rt, name, opts.namespace ?? obj.metadata?.namespace)) {
      return Promise.reject(new ApiError({ code: 409, reason: 'AlreadyExists', message: 'exists' }, 'POST', name));
    }
    return Promise.resolve(this.put(rt, { ...obj, metadata: { ...obj.metadata, uid: `uid-${name}` } }));
  }

  update<T extends KubeObject>(rt: ResourceType, obj: T, opts: { namespace?: string } = {}): Promise<T> {
    const name = obj.metadata?.name ?? '';
    const ns = opts.namespace ?? obj.metadata?.namespace;
    this.writes.push({ verb: 'update', resource: rt.resource, name, body: structuredClone(obj) });
    const current = this.read(rt, name, ns);
    if (!current) return Promise.reject(notFound(name));
    if (obj.metadata?.resourceVersion && obj.metadata.resourceVersion !== current.metadata?.resourceVersion) {
      return Promise.reject(conflict(name));
    }
    // the main resource keeps the stored status (a status subresource)
    const next = { ...structuredClone(obj), status: (current as { status?: unknown }).status } as T;
    return Promise.resolve(this.put(rt, next));
  }

  patch<T extends KubeObject>(
    rt: ResourceType,
    name: string,
    body: unknown,
    opts: { namespace?: string; subresource?: string },
  ): Promise<T> {
    this.writes.push({ verb: 'patch', resource: rt.resource, name, subresource: opts.subresource, body });
    const current = this.read(rt, name, opts.namespace);
    if (!current) return Promise.reject(notFound(name));
    const patch = structuredClone(body) as { metadata?: { resourceVersion?: string } };
    const want = patch.metadata?.resourceVersion;
    if (want && want !== current.metadata?.resourceVersion) return Promise.reject(conflict(name));
    if (patch.metadata) delete patch.metadata.resourceVersion;
    return Promise.resolve(this.put(rt, applyMergePatch(current, patch) as T));
  }

  delete(rt: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<KubeObject> {
    this.writes.push({ verb: 'delete', resource: rt.resource, name });
    this.remove(rt, name, opts.namespace);
    return Promise.resolve({});
  }
}

export class FakeEvents {
  readonly events: { reason: string; type: string; message: string; name?: string | undefined }[] = [];
  event(obj: KubeObject, type: string, reason: string, message: string): void {
    this.events.push({ reason, type, message, name: obj.metadata?.name });
  }
}

const idle: ListWatcher<KubeObject> = {
  list: () => Promise.resolve({ items: [], metadata: { resourceVersion: '1' } }),
  watch: () => new Promise(() => undefined),
};

function informer<T extends KubeObject>(
  clock: FakeClock,
  indexers: Record<string, (o: T) => string[]> = {},
): Informer<T> {
  const rt = { group: '', version: 'v1', resource: 'x', namespaced: true, kind: 'X' };
  return new Informer<T>(rt, idle as ListWatcher<T>, { clock, indexers });
}

export function bench(options: { nodePodProbeBudgetBytes?: number } = {}) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const api = new FakeApi();
  const events = new FakeEvents();
  const metrics = controllerMetrics(createRegistry());
  const podProbeMarkers = informer<PodProbeMarker>(clock, { [NAMESPACE_INDEX]: byNamespace });
  const nodePodProbes = informer<NodePodProbe>(clock, { [NPP_MARKER_INDEX]: markerKeysOf });
  const pods = informer<WirePod>(clock, { [NAMESPACE_INDEX]: byNamespace, [POD_NODE_INDEX]: byNodeName });
  const nodes = informer<WireNode>(clock);
  const parts = {
    client: api as unknown as KubeClient,
    events: events as unknown as EventRecorder,
    clock,
    logger: silentLogger,
    metrics,
    podProbeMarkers,
    nodePodProbes,
    pods,
    nodes,
  };
  const markers = new PodProbeMarkerController({ ...parts, ...options });
  const nodeProbes = new NodePodProbeController(parts);
  /**
   * Copy the API's objects into the caches (what a watch would deliver), removing what the API no longer has. The
   * controllers' handlers are not registered here (no start()), so their own-write expectations learn nothing from
   * the delivery: the clock moves past their deadline instead.
   */
  const sync = async (): Promise<void> => {
    for (const [rt, inf] of [
      [POD_PROBE_MARKERS, podProbeMarkers],
      [NODE_POD_PROBES, nodePodProbes],
      [CoreResources.pods, pods],
      [CoreResources.nodes, nodes],
    ] as [ResourceType, Informer<KubeObject>][]) {
      const fresh = api.all(rt);
      const keys = new Set<string>();
      for (const o of fresh) {
        inf.store.set(o);
        keys.add(o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? ''));
      }
      for (const k of inf.store.keys()) if (!keys.has(k)) inf.store.delete(k);
    }
    await clock.advance(OWN_WRITE_DEADLINE_MS + 1);
  };
  return { clock, api, events, metrics, markers, nodeProbes, sync, podProbeMarkers, nodePodProbes, pods, nodes };
}

export function node(name: string, labels: Record<string, string> = {}): WireNode {
  return { metadata: { name, labels } };
}

export function pod(
  name: string,
  nodeName: string,
  extra: {
    labels?: Record<string, string>;
    uid?: string;
    ip?: string;
    initialized?: boolean;
    ports?: { name: string; containerPort: number }[];
  } = {},
): WirePod {
  return {
    metadata: { name, namespace: 'ns', uid: extra.uid ?? `uid-${name}`, labels: extra.labels ?? { app: 'game' } },
    spec: {
      nodeName,
      containers: [{ name: 'main', image: 'busybox', ...(extra.ports && { ports: extra.ports }) }],
    },
    status: {
      phase: 'Running',
      podIP: extra.ip ?? '10.0.0.1',
      conditions: [{ type: 'Initialized', status: extra.initialized === false ? 'False' : 'True' }],
    },
  };
}

export function marker(name = 'm', extra: Partial<PodProbeMarker['spec']> = {}, finalized = true): PodProbeMarker {
  return {
    metadata: {
      name,
      namespace: 'ns',
      generation: 1,
      uid: `uid-${name}`,
      ...(finalized && { finalizers: [NODE_POD_PROBE_CLEANUP_FINALIZER] }),
    },
    spec: {
      selector: { matchLabels: { app: 'game' } },
      probes: [
        {
          name: 'healthy',
          containerName: 'main',
          probe: { exec: { command: ['true'] }, periodSeconds: 5 },
          podConditionType: 'game.kruise.io/healthy',
          markerPolicy: [
            { state: 'Succeeded', labels: { 'gameserver-state': 'ready' }, annotations: { 'game/ok': 'yes' } },
            { state: 'Failed', labels: { 'gameserver-state': 'down' }, annotations: { 'game/bad': 'yes' } },
          ],
        },
      ],
      ...extra,
    },
  };
}

export function emptyNpp(name: string): NodePodProbe {
  return { metadata: { name }, spec: {} };
}
