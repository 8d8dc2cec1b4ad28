// Fakes for the launch-priority unit tests: the node's pods (handlers fired like an informer), an API that keeps
// ConfigMaps and pods in memory (and feeds pod changes back to the pod source, as the watch would), a runtime whose
// containers the test sets, and an event sink.
import { Registry } from 'prom-client';
import { ApiError } from '../../../src/kube/errors.js';
import type { InformerHandlers, KubeObject } from '../../../src/kube/index.js';
import {
  keysData,
  type BarrierApi,
  type ConfigMapObject,
  type PodOwner,
} from '../../../src/daemon/launchpriority/barrier-api.js';
import {
  LaunchPriorityController,
  podKey,
  type EventSink,
  type PodSource,
} from '../../../src/daemon/launchpriority/controller.js';
import type { WirePod } from '../../../src/api/wire.js';
import { launchPriorityMetrics, type LaunchPriorityMetrics } from '../../../src/daemon/launchpriority/metrics.js';
import {
  CONTAINER_NAME_LABEL,
  POD_UID_LABEL,
  RuntimePoller,
  type ContainerSource,
  type ListedContainer,
} from '../../../src/daemon/launchpriority/runtime-poller.js';
import { silentLogger, type Logger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';

export class FakePods implements PodSource {
  private readonly pods = new Map<string, WirePod>();
  private readonly handlers = new Set<InformerHandlers<WirePod>>();
  private rv = 1;

  addHandlers(handlers: InformerHandlers<WirePod>): () => void {
    this.handlers.add(handlers);
    for (const pod of this.pods.values()) handlers.onAdd?.(pod);
    return () => this.handlers.delete(handlers);
  }

  get(key: string): WirePod | undefined {
    return this.pods.get(key);
  }

  hasSynced(): boolean {
    return true;
  }

  /** Add or replace a pod (new resourceVersion), firing onAdd/onUpdate. */
  set(pod: WirePod): WirePod {
    const stored = structuredClone(pod);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.rv) };
    const key = podKey(stored);
    const before = this.pods.get(key);
    this.pods.set(key, stored);
    for (const h of this.handlers) {
      if (before) h.onUpdate?.(before, stored);
      else h.onAdd?.(stored);
    }
    return stored;
  }

  delete(key: string): void {
    const before = this.pods.get(key);
    if (!before) return;
    this.pods.delete(key);
    for (const h of this.handlers) h.onDelete?.(before);
  }

  /** Change a pod through a function of its current copy. */
  update(key: string, change: (pod: WirePod) => void): WirePod {
    const current = this.pods.get(key);
    if (!current) throw new Error(`no pod ${key}`);
    const next = structuredClone(current);
    change(next);
    return this.set(next);
  }
}

function apiError(code: number, reason: string, message: string): ApiError {
  return new ApiError({ code, reason, message }, 'fake', '/fake');
}

export interface ApiCall {
  verb: 'observe' | 'create' | 'addKeys' | 'annotatePod';
  name: string;
  keys?: string[];
  annotations?: Record<string, string>;
}

export class FakeBarrierApi implements BarrierApi {
  readonly configMaps = new Map<string, ConfigMapObject>();
  readonly calls: ApiCall[] = [];
  private uidSeq = 0;
  /** Fail the next call of this verb with this error. */
  failNext: Partial<Record<ApiCall['verb'], ApiError>> = {};

  constructor(private readonly pods: FakePods) {}

  private fail(verb: ApiCall['verb']): void {
    const err = this.failNext[verb];
    if (err) {
      delete this.failNext[verb];
      throw err;
    }
  }

  observe(namespace: string, name: string): Promise<ConfigMapObject | undefined> {
    this.calls.push({ verb: 'observe', name });
    this.fail('observe');
    const cm = this.configMaps.get(`${namespace}/${name}`);
    return Promise.resolve(cm ? structuredClone(cm) : undefined);
  }

  /** A ConfigMap made by someone else (a user, or an earlier pod). */
  put(namespace: string, name: string, data: Record<string, string>, ownerUid?: string): void {
    this.configMaps.set(`${namespace}/${name}`, {
      metadata: {
        name,
        namespace,
        uid: `cm-${++this.uidSeq}`,
        ...(ownerUid && { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'old', uid: ownerUid }] }),
      },
      data,
    });
  }

  create(namespace: string, name: string, owner: PodOwner, keys: readonly string[]): Promise<ConfigMapObject> {
    this.calls.push({ verb: 'create', name, keys: [...keys] });
    this.fail('create');
    const k = `${namespace}/${name}`;
    if (this.configMaps.has(k))
      return Promise.reject(apiError(409, 'AlreadyExists', `configmaps "${name}" already exists`));
    const cm: ConfigMapObject = {
      metadata: {
        name,
        namespace,
        uid: `cm-${++this.uidSeq}`,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: owner.name, uid: owner.uid }],
      },
      data: keysData(keys),
    };
    this.configMaps.set(k, cm);
    return Promise.resolve(structuredClone(cm));
  }

  addKeys(namespace: string, name: string, keys: readonly string[]): Promise<ConfigMapObject> {
    this.calls.push({ verb: 'addKeys', name, keys: [...keys] });
    this.fail('addKeys');
    const cm = this.configMaps.get(`${namespace}/${name}`);
    if (!cm) return Promise.reject(apiError(404, 'NotFound', `configmaps "${name}" not found`));
    cm.data = { ...cm.data, ...keysData(keys) };
    return Promise.resolve(structuredClone(cm));
  }

  annotatePod(
    namespace: string,
    name: string,
    uid: string,
    annotations: Record<string, string>,
    absentAtResourceVersion?: string,
  ): Promise<void> {
    this.calls.push({ verb: 'annotatePod', name, annotations: { ...annotations } });
    this.fail('annotatePod');
    const key = `${namespace}/${name}`;
    const pod = this.pods.get(key);
    if (!pod) return Promise.reject(apiError(404, 'NotFound', `pods "${name}" not found`));
    if (pod.metadata?.uid !== uid) return Promise.reject(apiError(422, 'Invalid', 'test operation failed: uid'));
    if (absentAtResourceVersion !== undefined && pod.metadata?.resourceVersion !== absentAtResourceVersion) {
      return Promise.reject(apiError(422, 'Invalid', 'test operation failed: resourceVersion'));
    }
    this.pods.update(key, (p) => {
      p.metadata = { ...p.metadata, annotations: { ...p.metadata?.annotations, ...annotations } };
    });
    return Promise.resolve();
  }

  keysOf(namespace: string, name: string): string[] | undefined {
    const cm = this.configMaps.get(`${namespace}/${name}`);
    return cm ? Object.keys(cm.data ?? {}).sort() : undefined;
  }

  count(verb: ApiCall['verb']): number {
    return this.calls.filter((c) => c.verb === verb).length;
  }
}

/** The runtime: containers per pod uid, set by the test. */
export class FakeContainers implements ContainerSource {
  private readonly containers = new Map<string, ListedContainer & { startedAtMs?: number | undefined }>();
  lists = 0;
  private seq = 0;

  constructor(private readonly clock: FakeClock) {}

  /** Put the latest instance of a container into this state (a new attempt when `restart`). */
  set(podUid: string, name: string, state: string, options: { restart?: boolean } = {}): void {
    const key = `${podUid}/${name}`;
    const before = this.containers.get(key);
    const attempt = before ? before.attempt + (options.restart ? 1 : 0) : 0;
    const id = before && !options.restart ? before.id : `c${++this.seq}`;
    this.containers.set(key, {
      id,
      state,
      attempt,
      createdAtNs: String(BigInt(this.clock.now()) * 1_000_000n),
      labels: { [POD_UID_LABEL]: podUid, [CONTAINER_NAME_LABEL]: name },
      startedAtMs: state === 'CONTAINER_RUNNING' ? (before?.startedAtMs ?? this.clock.now()) : before?.startedAtMs,
    });
  }

  list(labelSelector?: Record<string, string>): Promise<ListedContainer[]> {
    this.lists++;
    const all = [...this.containers.values()].filter(
      (c) => !labelSelector || Object.entries(labelSelector).every(([k, v]) => c.labels[k] === v),
    );
    return Promise.resolve(all.map((c) => structuredClone(c)));
  }

  startedAtMs(id: string): Promise<number | undefined> {
    return Promise.resolve([...this.containers.values()].find((c) => c.id === id)?.startedAtMs);
  }
}

export class RecordedEvents implements EventSink {
  readonly events: { name: string; type: string; reason: string; message: string }[] = [];
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.events.push({ name: obj.metadata?.name ?? '', type, reason, message });
  }
}

export interface Harness {
  clock: FakeClock;
  pods: FakePods;
  api: FakeBarrierApi;
  runtime: FakeContainers;
  events: RecordedEvents;
  poller: RuntimePoller;
  controller: LaunchPriorityController;
  /** Let timers (poller ticks, requeues) and promise callbacks run for `ms` of fake time. */
  run(ms?: number): Promise<void>;
  stop(): Promise<void>;
}

export function harness(
  options: { metrics?: LaunchPriorityMetrics; pollIntervalMs?: number; logger?: Logger } = {},
): Harness {
  const clock = new FakeClock();
  const pods = new FakePods();
  const api = new FakeBarrierApi(pods);
  const runtime = new FakeContainers(clock);
  const events = new RecordedEvents();
  const sink: { controller?: LaunchPriorityController } = {};
  const poller = new RuntimePoller({
    source: () => Promise.resolve(runtime),
    clock,
    logger: silentLogger,
    intervalMs: options.pollIntervalMs ?? 50,
    onChange: (uid) => sink.controller?.onRuntimeChange(uid),
  });
  const controller = new LaunchPriorityController({
    pods,
    api,
    poller,
    events,
    clock,
    logger: options.logger ?? silentLogger,
    metrics: options.metrics ?? launchPriorityMetrics(new Registry()),
  });
  sink.controller = controller;
  controller.start();
  const h: Harness = {
    clock,
    pods,
    api,
    runtime,
    events,
    poller,
    controller,
    async run(ms = 200) {
      for (let t = 0; t < ms; t += 10) await clock.advance(10);
    },
    stop: () => controller.stop(),
  };
  return h;
}

export interface ContainerSpec {
  name: string;
  /** The barrier key this container waits on (absent: no barrier env). */
  key?: string;
  /** A readiness probe (readiness then comes from the pod status only). */
  probed?: boolean;
  /** A postStart hook (same: only kubelet knows when the container is ready). */
  postStart?: boolean;
  /** Override the barrier env entirely. */
  env?: unknown[];
}

/** A pod of the node as the webhook leaves it: every container has the barrier env. */
export function barrierPod(name: string, containers: ContainerSpec[], uid = `uid-${name}`, namespace = 'ns'): WirePod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid, annotations: {} },
    spec: {
      nodeName: 'node-a',
      containers: containers.map((c) => ({
        name: c.name,
        image: 'busybox',
        ...(c.probed && { readinessProbe: { exec: { command: ['true'] } } }),
        ...(c.postStart && { lifecycle: { postStart: { exec: { command: ['true'] } } } }),
        env:
          (c.env as never) ??
          (c.key === undefined
            ? []
            : [
                {
                  name: 'KRUISE_CONTAINER_BARRIER',
                  valueFrom: { configMapKeyRef: { name: `${name}-barrier`, key: c.key } },
                },
              ]),
      })),
    },
    status: { phase: 'Pending' },
  };
}

/** Set a container's status in the pod (ready flag and optional waiting reason). */
export function setContainerStatus(
  pods: FakePods,
  key: string,
  name: string,
  status: { ready: boolean; waiting?: { reason: string; message?: string } },
): void {
  pods.update(key, (pod) => {
    const list = (pod.status?.containerStatuses ?? []).filter((s) => s.name !== name);
    list.push({
      name,
      ready: status.ready,
      image: 'busybox',
      imageID: '',
      restartCount: 0,
      state: status.waiting ? { waiting: status.waiting } : { running: {} },
    });
    pod.status = { ...pod.status, containerStatuses: list };
  });
}
