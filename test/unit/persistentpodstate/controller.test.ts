// The PersistentPodState controller's reconcile against its caches (informer stores filled by the test), a fake API
// client that records writes, and a FakeClock: status written only when it changes and never from a cache older
// than our last write; generation creates, updates and deletes only what the StatefulSet controls; invalid objects
// get one event per generation; a native StatefulSet's deletion reaches its PPS (handlers, through the queue).
import assert from 'node:assert/strict';
import {
  byControllerUid,
  byTarget,
  EVENT_GENERATE_FAILED,
  EVENT_INVALID_SPEC,
  PersistentPodStateController,
  POD_CONTROLLER_UID_INDEX,
  PPS_TARGET_INDEX,
} from '../../../src/controller/persistentpodstate/controller.js';
import type { StatefulSetObject } from '../../../src/controller/persistentpodstate/resources.js';
import type { PersistentPodState } from '../../../src/api/persistentpodstate.js';
import type { WirePod, WireNode } from '../../../src/api/wire.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { EventRecorder } from '../../../src/kube/event-recorder.js';
import { Informer, type ListWatcher } from '../../../src/kube/informer/informer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import type { WatchEvent } from '../../../src/kube/watch-stream.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';
import { FakeListWatcher } from '../kube/support/fake-list-watcher.js';

const HOST = 'kubernetes.io/hostname';

interface Write {
  verb: string;
  resource: string;
  name: string;
  body?: unknown;
}

/** The KubeClient calls the controller makes, against an in-memory map; every write is recorded. */
class FakeClient {
  readonly writes: Write[] = [];
  readonly objects = new Map<string, KubeObject>();
  private rv = 1000;

  private key(rt: ResourceType, ns: string | undefined, name: string): string {
    return `${rt.resource}/${ns ?? ''}/${name}`;
  }

  seed(rt: ResourceType, obj: KubeObject): void {
    this.objects.set(this.key(rt, obj.metadata?.namespace, obj.metadata?.name ?? ''), structuredClone(obj));
  }

  get<T extends KubeObject>(rt: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<T> {
    const o = this.objects.get(this.key(rt, opts.namespace, name));
    if (!o) return Promise.reject(new ApiError({ code: 404, reason: 'NotFound', message: 'not found' }, 'GET', name));
    return Promise.resolve(structuredClone(o) as T);
  }

  create<T extends KubeObject>(rt: ResourceType, obj: T, opts: { namespace?: string } = {}): Promise<T> {
    const k = this.key(rt, opts.namespace, obj.metadata?.name ?? '');
    this.writes.push({ verb: 'create', resource: rt.resource, name: obj.metadata?.name ?? '', body: obj });
    if (this.objects.has(k)) {
      return Promise.reject(new ApiError({ code: 409, reason: 'AlreadyExists', message: 'exists' }, 'POST', k));
    }
    const stored = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(k, stored);
    return Promise.resolve(structuredClone(stored));
  }

  update<T extends KubeObject>(rt: ResourceType, obj: T, opts: { namespace?: string } = {}): Promise<T> {
    const k = this.key(rt, opts.namespace, obj.metadata?.name ?? '');
    this.writes.push({ verb: 'update', resource: rt.resource, name: obj.metadata?.name ?? '', body: obj });
    const stored = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(k, stored);
    return Promise.resolve(structuredClone(stored));
  }

  patch<T extends KubeObject>(rt: ResourceType, name: string, body: unknown, opts: { namespace?: string }): Promise<T> {
    const k = this.key(rt, opts.namespace, name);
    this.writes.push({ verb: 'patch', resource: rt.resource, name, body });
    const current = (this.objects.get(k) ?? { metadata: { name, namespace: opts.namespace } }) as T & {
      status?: unknown;
    };
    const status = (body as { status?: unknown }).status;
    const stored = { ...current, status, metadata: { ...current.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(k, stored);
    return Promise.resolve(structuredClone(stored) as T);
  }

  delete(rt: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<KubeObject> {
    this.writes.push({ verb: 'delete', resource: rt.resource, name });
    this.objects.delete(this.key(rt, opts.namespace, name));
    return Promise.resolve({});
  }
}

class FakeEvents {
  readonly events: { reason: string; type: string; message: string; name?: string | undefined }[] = [];
  event(obj: KubeObject, type: string, reason: string, message: string): void {
    this.events.push({ reason, type, message, name: obj.metadata?.name });
  }
}

const idle: ListWatcher<KubeObject> = {
  list: () => Promise.resolve({ items: [], metadata: { resourceVersion: '1' } }),
  watch: () => new Promise(() => undefined),
};

function setup(sources: { statefulSets?: FakeListWatcher } = {}) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const client = new FakeClient();
  const events = new FakeEvents();
  const rt = { group: '', version: 'v1', resource: 'x', namespaced: true, kind: 'X' };
  const persistentPodStates = new Informer<PersistentPodState>(rt, idle as ListWatcher<PersistentPodState>, {
    clock,
    indexers: { [PPS_TARGET_INDEX]: byTarget },
  });
  const statefulSets = new Informer<StatefulSetObject>(
    rt,
    (sources.statefulSets ?? idle) as ListWatcher<StatefulSetObject>,
    { clock },
  );
  const pods = new Informer<WirePod>(rt, idle as ListWatcher<WirePod>, {
    clock,
    indexers: { [POD_CONTROLLER_UID_INDEX]: byControllerUid },
  });
  const nodes = new Informer<WireNode>(rt, idle as ListWatcher<WireNode>, { clock });
  const controller = new PersistentPodStateController({
    client: client as unknown as KubeClient,
    persistentPodStates,
    statefulSets,
    pods,
    nodes,
    events: events as unknown as EventRecorder,
    clock,
    logger: silentLogger,
    metrics: controllerMetrics(createRegistry()),
  });
  return { clock, client, events, persistentPodStates, statefulSets, pods, nodes, controller };
}

function sts(annotations: Record<string, string> = {}, replicas = 2): StatefulSetObject {
  return {
    metadata: { name: 'web', namespace: 'ns', uid: 'sts-uid', resourceVersion: '5', annotations },
    spec: { replicas },
  };
}

function pps(extra: Partial<PersistentPodState['metadata']> = {}): PersistentPodState {
  return {
    metadata: { name: 'web', namespace: 'ns', generation: 2, resourceVersion: '7', ...extra },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' },
      requiredPersistentTopology: { nodeTopologyKeys: [HOST] },
    },
  };
}

function readyPod(name: string, node: string): WirePod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      resourceVersion: '9',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'sts-uid', controller: true }],
    },
    spec: { nodeName: node, containers: [] },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

const auto = {
  'kruise.io/auto-generate-persistent-pod-state': 'true',
  'kruise.io/required-persistent-topology': HOST,
};

describe('persistentpodstate controller: reconcile', () => {
  it('writes the recorded pods once; a cache older than that write waits; an unchanged status sends nothing', async () => {
    const t = setup();
    t.statefulSets.store.set(sts());
    t.nodes.store.set({ metadata: { name: 'node-a', labels: { [HOST]: 'node-a' } } });
    t.pods.store.set(readyPod('web-0', 'node-a'));
    const p = pps();
    t.persistentPodStates.store.set(p);
    t.client.seed({ group: '', version: '', resource: 'persistentpodstates', namespaced: true, kind: '' }, p);

    assert.equal(await t.controller.reconcile('pps/ns/web'), undefined);
    assert.equal(t.client.writes.length, 1);
    assert.deepEqual((t.client.writes[0]!.body as { status: unknown }).status, {
      observedGeneration: 2,
      podStates: { 'web-0': { nodeName: 'node-a', nodeTopologyLabels: { [HOST]: 'node-a' } } },
    });
    // the cache still shows the PPS without our write: look again shortly, write nothing
    assert.deepEqual(await t.controller.reconcile('pps/ns/web'), { requeueAfter: 100 });
    assert.equal(t.client.writes.length, 1);
    // the cache catches up: nothing left to write
    const stored = await t.client.get<PersistentPodState>(
      { group: '', version: '', resource: 'persistentpodstates', namespaced: true, kind: '' },
      'web',
      { namespace: 'ns' },
    );
    t.persistentPodStates.store.set(stored);
    assert.equal(await t.controller.reconcile('pps/ns/web'), undefined);
    assert.equal(t.client.writes.length, 1);
  });

  it('an invalid PPS gets one event per generation and no status write', async () => {
    const t = setup();
    const bad = pps();
    bad.spec.requiredPersistentTopology = { nodeTopologyKeys: ['bad key'] };
    t.persistentPodStates.store.set(bad);
    await t.controller.reconcile('pps/ns/web');
    await t.controller.reconcile('pps/ns/web');
    assert.deepEqual(
      t.events.events.map((e) => e.reason),
      [EVENT_INVALID_SPEC],
    );
    assert.match(t.events.events[0]!.message, /nodeTopologyKeys\[0\]: Invalid value: "bad key"/);
    t.persistentPodStates.store.set({ ...bad, metadata: { ...bad.metadata, generation: 3 } });
    await t.controller.reconcile('pps/ns/web');
    assert.equal(t.events.events.length, 2);
    assert.equal(t.client.writes.length, 0);
  });

  it('generation: creates the PPS, then updates only its spec when the annotations change', async () => {
    const t = setup();
    t.statefulSets.store.set(sts(auto));
    await t.controller.reconcile('sts/ns/web');
    assert.deepEqual(
      t.client.writes.map((w) => `${w.verb} ${w.name}`),
      ['create web'],
    );
    const created = t.client.writes[0]!.body as PersistentPodState;
    assert.equal(created.metadata?.ownerReferences?.[0]?.uid, 'sts-uid');
    t.persistentPodStates.store.set({ ...created, metadata: { ...created.metadata, resourceVersion: '1001' } });
    t.client.seed(
      { group: '', version: '', resource: 'persistentpodstates', namespaced: true, kind: '' },
      { ...created, metadata: { ...created.metadata, resourceVersion: '1001' } },
    );
    await t.controller.reconcile('sts/ns/web');
    assert.equal(t.client.writes.length, 1, 'unchanged annotations: nothing written');
    t.statefulSets.store.set(sts({ ...auto, 'kruise.io/preferred-persistent-topology': 'zone' }));
    await t.controller.reconcile('sts/ns/web');
    assert.deepEqual(
      t.client.writes.map((w) => `${w.verb} ${w.name}`),
      ['create web', 'update web'],
    );
    assert.deepEqual((t.client.writes[1]!.body as PersistentPodState).spec.preferredPersistentTopology, [
      { weight: 100, preference: { nodeTopologyKeys: ['zone'] } },
    ]);
  });

  it('generation off: deletes only a PPS the StatefulSet controls; a foreign one is left with an event', async () => {
    const t = setup();
    t.statefulSets.store.set(sts());
    t.persistentPodStates.store.set(pps({ ownerReferences: [] }));
    await t.controller.reconcile('sts/ns/web');
    assert.equal(t.client.writes.length, 0);
    t.persistentPodStates.store.set(
      pps({
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'sts-uid', controller: true },
        ],
      }),
    );
    await t.controller.reconcile('sts/ns/web');
    assert.deepEqual(
      t.client.writes.map((w) => `${w.verb} ${w.name}`),
      ['delete web'],
    );

    const u = setup();
    u.statefulSets.store.set(sts(auto));
    u.persistentPodStates.store.set(pps({ ownerReferences: [] }));
    await u.controller.reconcile('sts/ns/web');
    assert.equal(u.client.writes.length, 0);
    assert.deepEqual(
      u.events.events.map((e) => e.reason),
      [EVENT_GENERATE_FAILED],
    );
  });

  it("a native StatefulSet's deletion reaches its PPS: the entries are cleared", async () => {
    const lw = new FakeListWatcher();
    const t = setup({ statefulSets: lw });
    const recorded = pps();
    recorded.status = { observedGeneration: 2, podStates: { 'web-0': { nodeName: 'node-a' } } };
    t.persistentPodStates.store.set(recorded);
    t.client.seed({ group: '', version: '', resource: 'persistentpodstates', namespaced: true, kind: '' }, recorded);
    lw.objects.set('ns/web', sts());
    t.statefulSets.start();
    await t.statefulSets.synced;
    t.controller.start();
    try {
      const gone: WatchEvent = lw.remove('web');
      await waitFor(() => lw.watches.length > 0, { timeoutMs: 5000, message: 'the informer to watch' });
      lw.current.push(gone);
      await waitFor(() => t.client.writes.some((w) => w.verb === 'patch'), {
        timeoutMs: 5000,
        message: 'the status patch after the StatefulSet went',
      });
      const patch = t.client.writes.find((w) => w.verb === 'patch')!;
      assert.deepEqual((patch.body as { status: unknown }).status, { podStates: null });
      assert.equal(t.statefulSets.store.size, 0);
    } finally {
      await t.controller.stop();
      await t.statefulSets.stop();
    }
  });
});
