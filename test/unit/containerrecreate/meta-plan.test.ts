// The container meta controller's plan as a table: a situation (the pod in the cache, its containers in the runtime,
// the env hashes just read, what the agent remembers) and the actions it leads to, in order. Pure: no API server, no
// runtime. The controller's I/O is covered by container-meta.test.ts.
import assert from 'node:assert/strict';
import {
  IN_PLACE_UPDATE_STATE_ANNOTATION,
  RUNTIME_CONTAINERS_META_ANNOTATION,
  SIDECARSET_HASH_ANNOTATION,
} from '../../../src/api/constants.js';
import {
  envHash,
  type InPlaceUpdateContainerBatch,
  type RuntimeContainerMeta,
} from '../../../src/api/runtime-container-meta.js';
import type { WireContainer, WireContainerStatus, WirePod } from '../../../src/api/wire.js';
import {
  BATCH_RECHECK_MS,
  envToRead,
  ENV_RETRY_MS,
  isManaged,
  planContainerMeta,
  RESTART_BACKOFF_MAX_MS,
  RESTART_BACKOFF_MS,
  wantsMeta,
  type MetaAction,
  type NoticedValues,
  type RestartRecord,
} from '../../../src/daemon/containermeta/meta-plan.js';
import type { RuntimeContainer, RuntimeContainerState } from '../../../src/daemon/podruntime/pod-containers.js';
import { rfc3339 } from '../../../src/util/time.js';

/** When InPlaceUpdateReady turned False; the plan runs 10 s later. */
const UPDATE_STARTED = Date.parse('2026-01-01T00:00:00Z');
const NOW = UPDATE_STARTED + 10_000;
const PLAIN_HASH = 0xabc;

/** The env hash of a container whose V comes from annotation k-<name> with this value. */
const hashOf = (value: string): number => envHash([{ name: 'V', value }]);

/** A container whose env V comes from the pod's annotation k-<name>. */
function container(name: string, priority?: number): WireContainer {
  return {
    name,
    image: 'busybox',
    env: [
      { name: 'V', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['k-${name}']` } } },
      ...(priority === undefined ? [] : [{ name: 'KRUISE_CONTAINER_PRIORITY', value: String(priority) }]),
    ],
  };
}

/** `id` null: kubelet reports the container without an id (not started yet). */
function status(name: string, id: string | null = `${name}-1`, ready = true): WireContainerStatus {
  return {
    name,
    image: 'busybox',
    imageID: '',
    ...(id === null ? {} : { containerID: `containerd://${id}` }),
    restartCount: 0,
    ready,
  };
}

/** A recorded entry; `value` is the V its env hash was read with (none: not read). */
function entry(name: string, id = `${name}-1`, value?: string, restartCount = 0): RuntimeContainerMeta {
  return {
    name,
    containerID: `containerd://${id}`,
    restartCount,
    hashes: { plainHash: PLAIN_HASH, ...(value === undefined ? {} : { extractedEnvFromMetadataHash: hashOf(value) }) },
  };
}

function instance(
  name: string,
  id = `${name}-1`,
  state: RuntimeContainerState = 'running',
  restartCount = 0,
): RuntimeContainer {
  return {
    id,
    name,
    state,
    createdAtNs: 1n,
    startedAtMs: NOW - 60_000,
    restartCount,
    plainHash: PLAIN_HASH,
    labels: {},
    annotations: {},
  };
}

interface PodShape {
  containers: WireContainer[];
  /** The annotation values k-<name> the metadata asks for now. */
  values: Record<string, string>;
  statuses?: WireContainerStatus[];
  recorded?: RuntimeContainerMeta[];
  /** InPlaceUpdateReady: False since UPDATE_STARTED (an update under way), else True. */
  updating?: boolean;
  batches?: InPlaceUpdateContainerBatch[];
}

function pod(shape: PodShape): WirePod {
  const annotations: Record<string, string> = Object.fromEntries(
    Object.entries(shape.values).map(([name, value]) => [`k-${name}`, value]),
  );
  if (shape.recorded) annotations[RUNTIME_CONTAINERS_META_ANNOTATION] = metaJson(shape.recorded);
  if (shape.batches) annotations[IN_PLACE_UPDATE_STATE_ANNOTATION] = stateJson(shape.batches, 'r1');
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u', annotations },
    spec: { containers: shape.containers, readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
    status: {
      containerStatuses: shape.statuses ?? shape.containers.map((c) => status(c.name)),
      conditions: [
        {
          type: 'InPlaceUpdateReady',
          status: shape.updating ? 'False' : 'True',
          lastTransitionTime: rfc3339(UPDATE_STARTED),
        },
      ],
    },
  };
}

const metaJson = (containers: RuntimeContainerMeta[]): string => JSON.stringify({ containers });
const stateJson = (batches: InPlaceUpdateContainerBatch[], revision = ''): string =>
  JSON.stringify(
    revision === ''
      ? { revision, updateTimestamp: rfc3339(NOW), updateEnvFromMetadata: true, containerBatchesRecord: batches }
      : { revision, containerBatchesRecord: batches },
  );
const batchAt = (atMs: number, ...containers: string[]): InPlaceUpdateContainerBatch => ({
  timestamp: rfc3339(atMs),
  containers,
});

interface Situation {
  pod: WirePod;
  /** Default: every container of the spec, running as <name>-1. */
  runtime?: RuntimeContainer[];
  read?: Record<string, number>;
  envUnread?: boolean;
  stopped?: string[];
  restarts?: Record<string, RestartRecord>;
  noticed?: Record<string, NoticedValues>;
  /** Default 0: no wait for kubelet. */
  kubeletSettleMs?: number;
}

function plan(s: Situation): MetaAction[] {
  const runtime = s.runtime ?? (s.pod.spec?.containers ?? []).map((c) => instance(c.name));
  return planContainerMeta({
    pod: s.pod,
    runtime: new Map(runtime.map((c) => [c.name, c])),
    readEnvHashes: new Map(Object.entries(s.read ?? {})),
    envUnread: s.envUnread ?? false,
    memory: {
      stopped: new Set(s.stopped),
      restarts: new Map(Object.entries(s.restarts ?? {})),
      noticed: new Map(Object.entries(s.noticed ?? {})),
    },
    nowMs: NOW,
    kubeletSettleMs: s.kubeletSettleMs ?? 0,
  });
}

const app = [container('app')];
const v2 = hashOf('v2');
/** The app container noticed with v2 long ago (past any settle time). */
const noticedV2 = { app: { expected: v2, atMs: NOW - 60_000 } };
/** app runs v1, its metadata asks for v2, InPlaceUpdateReady is False. */
const appUpdating = pod({
  containers: app,
  values: { app: 'v2' },
  recorded: [entry('app', 'app-1', 'v1')],
  updating: true,
});
/** The same, app's batch of this update recorded already. */
const appBatchRecorded = pod({
  containers: app,
  values: { app: 'v2' },
  recorded: [entry('app', 'app-1', 'v1')],
  updating: true,
  batches: [batchAt(UPDATE_STARTED + 1000, 'app')],
});
/** The pod with its first container's spec image and the image kubelet reports for the running instance. */
function withImages(p: WirePod, specImage: string, statusImage: string): WirePod {
  const copy = structuredClone(p);
  copy.spec!.containers[0]!.image = specImage;
  copy.status!.containerStatuses![0]!.image = statusImage;
  return copy;
}
const restartApp = (attempts: number, backoffMs: number, runtimeId = 'app-1'): MetaAction => ({
  kind: 'restart',
  container: 'app',
  runtimeId,
  expected: v2,
  attempts,
  backoffMs,
});

/** high (priority 10) was restarted in this update's first batch and runs v2 as high-2, ready or not; low runs v1. */
const highRestarted = (ready: boolean): Situation => ({
  pod: pod({
    containers: [container('high', 10), container('low', 1)],
    values: { high: 'v2', low: 'v2' },
    statuses: [status('high', 'high-2', ready), status('low')],
    recorded: [entry('high', 'high-2', 'v2'), entry('low', 'low-1', 'v1')],
    updating: true,
    batches: [batchAt(UPDATE_STARTED + 1000, 'high')],
  }),
  runtime: [instance('high', 'high-2', 'running', 1), instance('low')],
});

const rows: Array<[situation: string, input: Situation, actions: MetaAction[]]> = [
  // runtime-containers-meta
  [
    'a new container: its entry with the env hash just read is written',
    { pod: pod({ containers: app, values: { app: 'v1' } }), read: { app: hashOf('v1') } },
    [
      {
        kind: 'annotate',
        annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: metaJson([entry('app', 'app-1', 'v1')]) },
      },
    ],
  ],
  [
    'the entry is recorded with its env hash and nothing changed: nothing to do',
    { pod: pod({ containers: app, values: { app: 'v1' }, recorded: [entry('app', 'app-1', 'v1')] }) },
    [],
  ],
  [
    'kubelet reports a container the runtime does not have, nothing recorded before: no write',
    { pod: pod({ containers: app, values: { app: 'v1' } }), runtime: [] },
    [],
  ],
  [
    'recorded before, but its container gone from the runtime: the meta is written empty',
    { pod: pod({ containers: app, values: { app: 'v1' }, recorded: [entry('app', 'app-1', 'v1')] }), runtime: [] },
    [{ kind: 'annotate', annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: metaJson([]) } }],
  ],
  [
    'a container kubelet reports without an id (not started yet): no entry',
    { pod: pod({ containers: app, values: { app: 'v1' }, statuses: [status('app', null)] }) },
    [],
  ],
  [
    'a status of a container not in the spec: no entry',
    { pod: pod({ containers: app, values: { app: 'v1' }, statuses: [status('ghost')] }) },
    [],
  ],
  [
    'a new instance: its own entry (restart count from the runtime) replaces the old one',
    {
      pod: pod({
        containers: app,
        values: { app: 'v1' },
        statuses: [status('app', 'app-2')],
        recorded: [entry('app', 'app-1', 'v1')],
      }),
      runtime: [instance('app', 'app-2', 'running', 1)],
      read: { app: hashOf('v1') },
    },
    [
      {
        kind: 'annotate',
        annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: metaJson([entry('app', 'app-2', 'v1', 1)]) },
      },
    ],
  ],
  [
    'the env could not be read: the entry is written without env hash, look again in 3 s',
    { pod: pod({ containers: app, values: { app: 'v1' } }), envUnread: true },
    [
      { kind: 'annotate', annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: metaJson([entry('app')]) } },
      { kind: 'requeue', afterMs: ENV_RETRY_MS },
    ],
  ],
  [
    'an exited container: its entry without env hash',
    { pod: pod({ containers: app, values: { app: 'v1' } }), runtime: [instance('app', 'app-1', 'exited')] },
    [{ kind: 'annotate', annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: metaJson([entry('app')]) } }],
  ],
  [
    'new values while no in-place update is under way (InPlaceUpdateReady True): no restart',
    { pod: pod({ containers: app, values: { app: 'v2' }, recorded: [entry('app', 'app-1', 'v1')] }) },
    [],
  ],
  // restarts while InPlaceUpdateReady is False
  [
    'the container runs with the values asked for: what the agent remembers of it is forgotten',
    {
      pod: pod({ containers: app, values: { app: 'v2' }, recorded: [entry('app', 'app-1', 'v2')], updating: true }),
      noticed: noticedV2,
    },
    [{ kind: 'forget', container: 'app' }],
  ],
  [
    'new values seen for the first time, no settle time: noticed, the batch recorded, the container restarted',
    { pod: appUpdating },
    [
      { kind: 'notice', container: 'app', expected: v2, atMs: NOW },
      { kind: 'annotate', annotations: { [IN_PLACE_UPDATE_STATE_ANNOTATION]: stateJson([batchAt(NOW, 'app')]) } },
      restartApp(1, RESTART_BACKOFF_MS),
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
  [
    'new values and a new image together (OpenKruise #1263): kubelet restarts the container, the agent stops nothing',
    { pod: withImages(appUpdating, 'busybox:2', 'docker.io/library/busybox:latest') },
    [{ kind: 'notice', container: 'app', expected: v2, atMs: NOW }],
  ],
  [
    'the same image, named the way kubelet reports it: the restart for the env as usual',
    { pod: withImages(appUpdating, 'busybox', 'docker.io/library/busybox:latest'), noticed: noticedV2 },
    [
      { kind: 'annotate', annotations: { [IN_PLACE_UPDATE_STATE_ANNOTATION]: stateJson([batchAt(NOW, 'app')]) } },
      restartApp(1, RESTART_BACKOFF_MS),
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
  [
    'kubelet reports an image id for the instance: no telling, the restart for the env as usual',
    { pod: withImages(appUpdating, 'busybox:2', `sha256:${'ab'.repeat(32)}`), noticed: noticedV2 },
    [
      { kind: 'annotate', annotations: { [IN_PLACE_UPDATE_STATE_ANNOTATION]: stateJson([batchAt(NOW, 'app')]) } },
      restartApp(1, RESTART_BACKOFF_MS),
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
  [
    'new values seen less than the settle time ago: the restart waits for kubelet the rest of it',
    {
      pod: appUpdating,
      noticed: { app: { expected: v2, atMs: NOW - 500 } },
      kubeletSettleMs: 2000,
    },
    [
      { kind: 'settle', containers: ['app'], leftMs: 1500 },
      { kind: 'requeue', afterMs: 1500 },
    ],
  ],
  [
    'the values asked for changed again since they were noticed: noticed anew, the full settle time',
    {
      pod: appUpdating,
      noticed: { app: { expected: hashOf('v3'), atMs: NOW - 60_000 } },
      kubeletSettleMs: 2000,
    },
    [
      { kind: 'notice', container: 'app', expected: v2, atMs: NOW },
      { kind: 'settle', containers: ['app'], leftMs: 2000 },
      { kind: 'requeue', afterMs: 2000 },
    ],
  ],
  [
    'no env hash recorded (the read failed): noticed, not restarted, look again in 3 s',
    {
      pod: pod({ containers: app, values: { app: 'v2' }, recorded: [entry('app')], updating: true }),
      envUnread: true,
    },
    [
      { kind: 'notice', container: 'app', expected: v2, atMs: NOW },
      { kind: 'requeue', afterMs: ENV_RETRY_MS },
    ],
  ],
  [
    'the container is not running: not restarted',
    {
      pod: appUpdating,
      runtime: [instance('app', 'app-1', 'exited')],
      noticed: noticedV2,
    },
    [],
  ],
  [
    'this instance was stopped by this agent already: not stopped again',
    {
      pod: appUpdating,
      stopped: ['app-1'],
      noticed: noticedV2,
    },
    [],
  ],
  [
    'restarted for the same values within its backoff: look again right after the backoff',
    {
      pod: appUpdating,
      noticed: noticedV2,
      restarts: { app: { expected: v2, attempts: 1, notBeforeMs: NOW + 3000 } },
    },
    [{ kind: 'requeue', afterMs: 3001 }],
  ],
  [
    'came back with the old values after its backoff: restarted again, the backoff doubled; the recorded batch resumed',
    {
      pod: appBatchRecorded,
      noticed: noticedV2,
      restarts: { app: { expected: v2, attempts: 1, notBeforeMs: NOW - 1 } },
    },
    [restartApp(2, 2 * RESTART_BACKOFF_MS), { kind: 'requeue', afterMs: BATCH_RECHECK_MS }],
  ],
  [
    'the backoff stops doubling at 10 minutes',
    {
      pod: appBatchRecorded,
      noticed: noticedV2,
      restarts: { app: { expected: v2, attempts: 9, notBeforeMs: NOW - 1 } },
    },
    [restartApp(10, RESTART_BACKOFF_MAX_MS), { kind: 'requeue', afterMs: BATCH_RECHECK_MS }],
  ],
  [
    'restarted before for other values: its backoff does not hold, the first attempt for these',
    {
      pod: appBatchRecorded,
      noticed: noticedV2,
      restarts: { app: { expected: hashOf('v9'), attempts: 4, notBeforeMs: NOW + 100_000 } },
    },
    [restartApp(1, RESTART_BACKOFF_MS), { kind: 'requeue', afterMs: BATCH_RECHECK_MS }],
  ],
  [
    'two stale containers: the higher launch priority is the batch, the lower waits',
    {
      pod: pod({
        containers: [container('high', 10), container('low', 1)],
        values: { high: 'v2', low: 'v2' },
        recorded: [entry('high', 'high-1', 'v1'), entry('low', 'low-1', 'v1')],
        updating: true,
      }),
    },
    [
      { kind: 'notice', container: 'high', expected: v2, atMs: NOW },
      { kind: 'notice', container: 'low', expected: v2, atMs: NOW },
      { kind: 'annotate', annotations: { [IN_PLACE_UPDATE_STATE_ANNOTATION]: stateJson([batchAt(NOW, 'high')]) } },
      { kind: 'restart', container: 'high', runtimeId: 'high-1', expected: v2, attempts: 1, backoffMs: 3000 },
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
  [
    'the last batch of this update is not ready again: the next one waits, look again in 1 s',
    highRestarted(false),
    [
      { kind: 'forget', container: 'high' },
      { kind: 'notice', container: 'low', expected: v2, atMs: NOW },
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
  [
    'the last batch of this update runs again, ready, with the new values: the next batch is recorded after it',
    highRestarted(true),
    [
      { kind: 'forget', container: 'high' },
      { kind: 'notice', container: 'low', expected: v2, atMs: NOW },
      {
        kind: 'annotate',
        annotations: {
          [IN_PLACE_UPDATE_STATE_ANNOTATION]: JSON.stringify({
            revision: 'r1',
            containerBatchesRecord: [batchAt(UPDATE_STARTED + 1000, 'high'), batchAt(NOW, 'low')],
          }),
        },
      },
      { kind: 'restart', container: 'low', runtimeId: 'low-1', expected: v2, attempts: 1, backoffMs: 3000 },
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
  [
    'a restart and an env that could not be read: look again in 1 s, for the restart',
    {
      pod: pod({
        containers: [container('app'), container('side')],
        values: { app: 'v2', side: 'v1' },
        recorded: [entry('app', 'app-1', 'v1'), entry('side')],
        updating: true,
      }),
      envUnread: true,
      noticed: { ...noticedV2, side: { expected: hashOf('v1'), atMs: NOW - 60_000 } },
    },
    [
      { kind: 'annotate', annotations: { [IN_PLACE_UPDATE_STATE_ANNOTATION]: stateJson([batchAt(NOW, 'app')]) } },
      restartApp(1, RESTART_BACKOFF_MS),
      { kind: 'requeue', afterMs: BATCH_RECHECK_MS },
    ],
  ],
];

describe('container meta plan: situation → actions', () => {
  for (const [situation, input, actions] of rows) {
    it(situation, () => {
      assert.deepEqual(plan(input), actions);
    });
  }
});

describe('container meta plan: whose env is read, which pods are looked at', () => {
  const readOf = (shape: PodShape, runtime?: RuntimeContainer[]): string[] => {
    const p = pod(shape);
    const instances = runtime ?? shape.containers.map((c) => instance(c.name));
    return envToRead(p, new Map(instances.map((c) => [c.name, c]))).map((r) => `${r.spec.name}@${r.instance.id}`);
  };

  const reads: Array<[situation: string, shape: PodShape, runtime: RuntimeContainer[] | undefined, read: string[]]> = [
    ['a running container without a recorded entry', { containers: app, values: {} }, undefined, ['app@app-1']],
    [
      'a running container whose entry has no env hash',
      { containers: app, values: {}, recorded: [entry('app')] },
      undefined,
      ['app@app-1'],
    ],
    [
      'a container whose env hash is recorded',
      { containers: app, values: {}, recorded: [entry('app', 'app-1', 'v1')] },
      undefined,
      [],
    ],
    [
      'a new instance of a container whose old instance has an env hash',
      { containers: app, values: {}, recorded: [entry('app', 'app-1', 'v1')], statuses: [status('app', 'app-2')] },
      [instance('app', 'app-2')],
      ['app@app-2'],
    ],
    ['an exited container', { containers: app, values: {} }, [instance('app', 'app-1', 'exited')], []],
  ];
  for (const [situation, shape, runtime, read] of reads) {
    it(`env read: ${situation} → ${read.length > 0 ? read.join(', ') : 'none'}`, () => {
      assert.deepEqual(readOf(shape, runtime), read);
    });
  }

  const plain: WirePod = { metadata: { name: 'p', namespace: 'ns' }, spec: { containers: app } };
  const withStatus = (p: WirePod): WirePod => ({ ...p, status: { containerStatuses: [status('app')] } });
  const owned = (apiVersion: string, controller: boolean): WirePod => ({
    ...plain,
    metadata: { ...plain.metadata, ownerReferences: [{ apiVersion, kind: 'X', name: 'x', uid: 'x', controller }] },
  });
  const managed: Array<[situation: string, pod: WirePod, managed: boolean]> = [
    ['a plain pod', plain, false],
    [
      'a pod with runtime-containers-meta',
      { ...plain, metadata: { annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: '{}' } } },
      true,
    ],
    [
      'a SidecarSet-injected pod',
      { ...plain, metadata: { annotations: { [SIDECARSET_HASH_ANNOTATION]: '{}' } } },
      true,
    ],
    ['a pod an apps.kruise.io workload controls', owned('apps.kruise.io/v1alpha1', true), true],
    ['a pod an apps.kruise.io object owns without controlling it', owned('apps.kruise.io/v1alpha1', false), false],
    ['a pod an apps/v1 workload controls', owned('apps/v1', true), false],
    [
      'a pod with the InPlaceUpdateReady readiness gate',
      { ...plain, spec: { containers: app, readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] } },
      true,
    ],
  ];
  for (const [situation, p, expected] of managed) {
    it(`managed: ${situation} → ${expected}`, () => {
      assert.equal(isManaged(p), expected);
      assert.equal(wantsMeta(withStatus(p)), expected);
    });
  }

  it('a managed pod is not looked at while it has no container statuses, nor once it is being deleted', () => {
    const gated = pod({ containers: app, values: {} });
    assert.equal(wantsMeta(gated), true);
    assert.equal(wantsMeta({ ...gated, status: { containerStatuses: [] } }), false);
    assert.equal(wantsMeta({ ...gated, metadata: { ...gated.metadata, deletionTimestamp: rfc3339(NOW) } }), false);
  });
});
