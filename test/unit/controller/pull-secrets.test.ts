// Pull-secret copies with least privilege, against an in-memory fake API serving secrets only by name (a GET, or a
// list/watch with fieldSelector metadata.name, as RBAC resourceNames allow) and answering 403 where the controller
// was not granted access (the emulator has no RBAC). Each source has a watch of its own while a job names it: an
// edit, a delete, a grant or a revocation reaches the jobs without any job event (FakeClock for the watch backoff);
// a 403 leaves the job pulling without that secret while its status and a Warning event name the namespace and the
// `kubectl create rolebinding` command.
import assert from 'node:assert/strict';
import { ImagePullJobController } from '../../../src/controller/imagepulljob/controller.js';
import { copyNameFor, PullSecretSync, referencesOf } from '../../../src/controller/pullsecrets/secret-sync.js';
import { grantCommand, withSecretProblems } from '../../../src/controller/pullsecrets/source-access.js';
import type { SecretObject } from '../../../src/controller/resources.js';
import type { ImagePullJob } from '../../../src/api/imagepulljob.js';
import type { NodeImage } from '../../../src/api/nodeimage.js';
import { OwnWriteExpectations } from '../../../src/kube/own-writes.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { EventRecorder } from '../../../src/kube/event-recorder.js';
import type { Informer, InformerHandlers } from '../../../src/kube/informer/informer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';
import { FakeWatch } from '../kube/support/fake-list-watcher.js';

const CONFIG_NS = 'kruise-daemon-config';
const GRANT =
  'kubectl create rolebinding kruise-controller-pull-secret-reader --clusterrole=kruise-controller-pull-secret-reader ' +
  '--serviceaccount=kruise-system:kruise-controller -n locked';

interface Call {
  verb: string;
  resource: string;
  namespace?: string | undefined;
  name: string;
}

/** A watch on secrets the fake API serves: namespace and the name its fieldSelector asks for. */
interface SecretWatch {
  namespace: string;
  name: string;
  stream: FakeWatch;
}

/**
 * An API holding objects by resource/namespace/name. Secrets are served as RBAC with `resourceNames` would: a named
 * GET, or a list/watch whose fieldSelector is `metadata.name=<name>`; an unnamed list or watch throws. Any secret
 * request in a namespace in `forbidden` answers 403.
 */
class FakeApi {
  readonly objects = new Map<string, KubeObject>();
  readonly calls: Call[] = [];
  /** The status of every status patch, in order. */
  readonly statuses: { message?: string }[] = [];
  readonly client: KubeClient;
  readonly secretWatches: SecretWatch[] = [];
  private rv = 1;

  constructor(readonly forbidden: Set<string>) {
    this.client = this.makeClient();
  }

  put<T extends KubeObject>(resource: string, obj: T): void {
    obj.metadata = { ...obj.metadata, resourceVersion: String(this.rv++) };
    const key = `${resource}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
    const existed = this.objects.has(key);
    this.objects.set(key, structuredClone(obj));
    if (resource === 'secrets') this.tell(existed ? 'MODIFIED' : 'ADDED', obj);
  }

  remove(resource: string, namespace: string, name: string): void {
    const key = `${resource}/${namespace}/${name}`;
    const old = this.objects.get(key);
    this.objects.delete(key);
    if (old && resource === 'secrets') {
      this.tell('DELETED', { ...old, metadata: { ...old.metadata, resourceVersion: String(this.rv++) } });
    }
  }

  /** Secret watches still open, as `ns/name`. */
  openSecretWatches(): string[] {
    return this.secretWatches.filter((w) => !w.stream.closed).map((w) => `${w.namespace}/${w.name}`);
  }

  private tell(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void {
    for (const w of this.secretWatches) {
      if (w.stream.closed || w.namespace !== obj.metadata?.namespace || w.name !== obj.metadata?.name) continue;
      w.stream.push({ type, object: structuredClone(obj) });
    }
  }

  private makeClient(): KubeClient {
    const key = (rt: ResourceType, ns: string | undefined, name: string): string =>
      `${rt.resource}/${ns ?? ''}/${name}`;
    const fail = (code: number, reason: string, verb: string, path: string): ApiError =>
      ApiError.fromResponse(code, JSON.stringify({ kind: 'Status', code, reason, message: path }), verb, path);
    const record = (verb: string, rt: ResourceType, namespace: string | undefined, name: string): void => {
      this.calls.push({ verb, resource: rt.resource, namespace, name });
    };
    // Each call answers at once; a throw of the fake comes back as a rejection, as a failed API call does.
    const answer = <T>(fn: () => T): Promise<T> => new Promise((resolve) => resolve(fn()));
    return {
      get: (rt: ResourceType, name: string, opts: { namespace?: string } = {}) =>
        answer(() => {
          record('get', rt, opts.namespace, name);
          if (rt.resource === 'secrets' && this.forbidden.has(opts.namespace ?? '')) {
            throw fail(403, 'Forbidden', 'GET', `secrets "${name}" is forbidden`);
          }
          const o = this.objects.get(key(rt, opts.namespace, name));
          if (!o) throw fail(404, 'NotFound', 'GET', name);
          return structuredClone(o);
        }),
      list: (rt: ResourceType, opts: { namespace?: string; fieldSelector?: string } = {}) =>
        answer(() => {
          const name = this.namedSecret(rt, opts, 'list');
          const items = [...this.objects.entries()]
            .filter(([k]) => k === key(rt, opts.namespace, name))
            .map(([, o]) => structuredClone(o));
          return { metadata: { resourceVersion: String(this.rv) }, items };
        }),
      watch: (rt: ResourceType, opts: { namespace?: string; fieldSelector?: string; signal?: AbortSignal }) =>
        answer(() => {
          const name = this.namedSecret(rt, opts, 'watch');
          const stream = new FakeWatch(opts);
          this.secretWatches.push({ namespace: opts.namespace ?? '', name, stream });
          return stream;
        }),
      create: (rt: ResourceType, obj: KubeObject) =>
        answer(() => {
          record('create', rt, obj.metadata?.namespace, obj.metadata?.name ?? '');
          if (this.objects.has(key(rt, obj.metadata?.namespace, obj.metadata?.name ?? ''))) {
            throw fail(409, 'AlreadyExists', 'POST', obj.metadata?.name ?? '');
          }
          this.put(rt.resource, obj);
          return structuredClone(obj);
        }),
      update: (rt: ResourceType, obj: KubeObject) =>
        answer(() => {
          record('update', rt, obj.metadata?.namespace, obj.metadata?.name ?? '');
          this.put(rt.resource, obj);
          return structuredClone(obj);
        }),
      delete: (rt: ResourceType, name: string, opts: { namespace?: string } = {}) =>
        answer(() => {
          record('delete', rt, opts.namespace, name);
          this.objects.delete(key(rt, opts.namespace, name));
          return {};
        }),
      // Status patches come back without a resourceVersion, so no cache expectation is left waiting.
      patch: (rt: ResourceType, name: string, body: { status?: unknown }, opts: { namespace?: string } = {}) =>
        answer(() => {
          record('patch', rt, opts.namespace, name);
          this.statuses.push(body.status as { message?: string });
          const o = this.objects.get(key(rt, opts.namespace, name));
          return { ...o, metadata: { ...o?.metadata, resourceVersion: undefined }, status: body.status };
        }),
    } as unknown as KubeClient;
  }

  /** The name a secrets list/watch is for (RBAC `resourceNames` see it only through this field selector). */
  private namedSecret(rt: ResourceType, opts: { namespace?: string; fieldSelector?: string }, verb: string): string {
    const name = /^metadata\.name=([a-z0-9.-]+)$/.exec(opts.fieldSelector ?? '')?.[1];
    this.calls.push({ verb, resource: rt.resource, namespace: opts.namespace, name: name ?? '' });
    if (rt.resource !== 'secrets' || !opts.namespace || !name) {
      throw new Error(`the controller must not ${verb} ${rt.resource} unnamed (${JSON.stringify(opts)})`);
    }
    if (this.forbidden.has(opts.namespace)) {
      throw ApiError.fromResponse(
        403,
        JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message: `secrets "${name}" is forbidden` }),
        verb.toUpperCase(),
        `/api/v1/namespaces/${opts.namespace}/secrets`,
      );
    }
    return name;
  }

  /** The copies in kruise-daemon-config, as the namespace-scoped informer would cache them. */
  copies(): SecretObject[] {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(`secrets/${CONFIG_NS}/`))
      .map(([, o]) => o as SecretObject);
  }

  sourceGets(namespace: string, name: string): number {
    return this.calls.filter(
      (c) => c.verb === 'get' && c.resource === 'secrets' && c.namespace === namespace && c.name === name,
    ).length;
  }
}

/** An informer over whatever `items()` returns (get by key, list; handlers kept in `handlers`, never fired by it). */
function cacheOf<T extends KubeObject>(items: () => T[], handlers?: InformerHandlers<T>[]): Informer<T> {
  const keyOf = (o: T): string =>
    o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata?.name ?? '');
  return {
    get: (key: string) => items().find((o) => keyOf(o) === key),
    list: () => items(),
    addHandlers: (h: InformerHandlers<T>) => {
      handlers?.push(h);
      return () => undefined;
    },
    store: { byIndex: () => [] },
  } as unknown as Informer<T>;
}

function secret(namespace: string, name: string, token: string): SecretObject {
  return {
    metadata: { name, namespace, uid: `uid-${namespace}-${name}` },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(token).toString('base64') },
  };
}

function job(namespace: string, name: string, pullSecrets: string[]): ImagePullJob {
  return {
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      resourceVersion: '1',
      finalizers: ['apps.kruise.io/deletion-protection'],
    },
    spec: { image: 'nginx:1.25', pullSecrets, parallelism: 10, completionPolicy: { type: 'Never' } },
  };
}

function nodeImage(name: string): NodeImage {
  return { metadata: { name, resourceVersion: '1' }, spec: {} };
}

interface Recorded {
  type: string;
  reason: string;
  message: string;
}

function setup(jobs: ImagePullJob[], forbidden: string[], nodeImageHandlers?: InformerHandlers<NodeImage>[]) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const api = new FakeApi(new Set(forbidden));
  const events: Recorded[] = [];
  for (const ni of [nodeImage('n1'), nodeImage('n2')]) api.put('nodeimages', ni);
  const copies = cacheOf<SecretObject>(() => api.copies());
  const nodeImages = cacheOf<NodeImage>(
    () => [...api.objects.entries()].filter(([k]) => k.startsWith('nodeimages/')).map(([, o]) => o as NodeImage),
    nodeImageHandlers,
  );
  const nodeImageExpectations = new OwnWriteExpectations(clock);
  const metrics = controllerMetrics(createRegistry());
  const sync = new PullSecretSync(api.client, copies, metrics, { clock, logger: silentLogger });
  const controller = new ImagePullJobController({
    client: api.client,
    jobs: cacheOf(() => jobs),
    nodeImages,
    secretCopies: copies,
    secretSync: sync,
    nodeImageExpectations,
    jobExpectations: new OwnWriteExpectations(clock),
    events: {
      event: (_o: KubeObject, type: string, reason: string, message: string) => events.push({ type, reason, message }),
    } as unknown as EventRecorder,
    clock,
    logger: silentLogger,
    metrics,
    workers: 1,
  });
  stops.push(() => sync.stop());
  return { clock, api, events, controller, sync, nodeImageExpectations };
}

/** What setup() and syncOver() started that a test does not stop itself (the source watches). */
const stops: (() => Promise<void>)[] = [];

/** A PullSecretSync of its own over `api` (a fake clock: its watches' retries wait for nothing real). */
function syncOver(api: FakeApi): PullSecretSync {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const sync = new PullSecretSync(
    api.client,
    cacheOf(() => api.copies()),
    controllerMetrics(createRegistry()),
    { clock, logger: silentLogger },
  );
  stops.push(() => sync.stop());
  return sync;
}

describe('pull secrets: least privilege', () => {
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  it('reads a source by name only: a GET until its watch has synced, a list and watch of that one secret', async () => {
    const { api, controller } = setup([job('team', 'j', ['regcred'])], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    await controller.reconcile('team/j');
    assert.equal(api.sourceGets('team', 'regcred'), 1, 'the first claim does not wait for the watch');
    await waitFor(() => api.openSecretWatches().length === 1 || undefined, { timeoutMs: 2_000 });
    await controller.reconcile('team/j');
    assert.equal(api.sourceGets('team', 'regcred'), 1, 'then the watch answers');
    const secretCalls = api.calls.filter((c) => c.resource === 'secrets' && c.namespace !== CONFIG_NS);
    assert.deepEqual(secretCalls.map((c) => `${c.verb} ${c.namespace}/${c.name}`).sort(), [
      'get team/regcred',
      'list team/regcred',
      'watch team/regcred',
    ]);
    const copy = api.copies().find((c) => c.metadata?.name === copyNameFor('team', 'regcred'));
    assert.deepEqual(referencesOf(copy!), ['team/j']);
  });

  it('treats a name no secret can have as missing, without asking the API', async () => {
    const { api, events, controller } = setup([job('team', 'j', ['Bad,Name=x'])], []);
    await controller.reconcile('team/j');
    assert.deepEqual(
      events.map((e) => e.message),
      ['pull secrets not found in namespace team: Bad,Name=x'],
    );
    assert.ok(!api.calls.some((c) => c.resource === 'secrets'));
  });

  it('on 403 reports the namespace and the grant command in the status and a Warning event; the rest carries on', async () => {
    const jobs = [job('locked', 'j', ['regcred', 'other'])];
    const { api, events, controller } = setup(jobs, ['locked']);
    const sync = syncOver(api);
    const result = await sync.claim('locked', 'locked/j', ['regcred', 'other']);
    assert.deepEqual(result, { refs: [], missing: [], forbidden: ['regcred', 'other'] });
    assert.deepEqual(api.copies(), [], 'nothing copied');

    await controller.reconcile('locked/j');
    const warning = events.find((e) => e.reason === 'PullSecretForbidden');
    assert.equal(warning?.type, 'Warning');
    assert.match(warning?.message ?? '', /pull secrets regcred, other in namespace locked \(403 Forbidden\)/);
    assert.ok(warning?.message.endsWith(GRANT), warning?.message);
    // The job went on: its tag was written into both NodeImages (without pull secrets).
    const written = api.calls.filter((c) => c.verb === 'update' && c.resource === 'nodeimages').map((c) => c.name);
    assert.deepEqual(written.sort(), ['n1', 'n2']);
    const ni = api.objects.get('nodeimages//n1') as NodeImage;
    assert.equal(ni.spec?.images?.nginx?.tags?.[0]?.tag, '1.25');
    assert.equal(ni.spec?.images?.nginx?.pullSecrets, undefined);
    const message = api.statuses.at(-1)?.message ?? '';
    assert.match(message, /^job is running, progress 0\.0%; kruise-controller may not read pull secrets/);
    assert.ok(message.includes('namespace locked') && message.endsWith(GRANT), message);
  });

  it('copies what it may read and reports what it may not, for one job', async () => {
    const { api, controller, events } = setup([job('team', 'j', ['regcred', 'gone'])], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    await controller.reconcile('team/j');
    assert.equal(api.copies().length, 1);
    assert.deepEqual(
      events.map((e) => [e.reason, e.message]),
      [['PullSecretNotFound', 'pull secrets not found in namespace team: gone']],
    );
    const ni = api.objects.get('nodeimages//n1') as NodeImage;
    assert.deepEqual(ni.spec?.images?.nginx?.pullSecrets, [
      { namespace: CONFIG_NS, name: copyNameFor('team', 'regcred'), mode: 'batch' },
    ]);
  });

  it('drops a job from a copy whose source became forbidden (revoked access) and deletes the orphan copy', async () => {
    const open = setup([job('team', 'j', ['regcred'])], []);
    open.api.put('secrets', secret('team', 'regcred', 'one'));
    await open.controller.reconcile('team/j');
    assert.equal(open.api.copies().length, 1);
    // Same objects, now behind a 403.
    const revoked = new FakeApi(new Set(['team']));
    for (const [k, o] of open.api.objects) revoked.objects.set(k, o);
    const sync = syncOver(revoked);
    const result = await sync.claim('team', 'team/j', ['regcred']);
    assert.deepEqual(result.forbidden, ['regcred']);
    assert.deepEqual(revoked.copies(), []);
  });

  const tokenOf = (api: FakeApi, namespace: string, name: string): string | undefined => {
    const copy: SecretObject | undefined = api.objects.get(`secrets/${CONFIG_NS}/${copyNameFor(namespace, name)}`);
    const data = copy?.data?.['.dockerconfigjson'];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString();
  };

  it('follows an edit of the source by watching it: the copy changes with no job event and no resync', async () => {
    const { api, controller } = setup([job('team', 'j', ['regcred'])], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    controller.start();
    try {
      await controller.reconcile('team/j');
      assert.equal(tokenOf(api, 'team', 'regcred'), 'one');
      await waitFor(() => api.openSecretWatches().includes('team/regcred') || undefined, { timeoutMs: 2_000 });
      for (const token of ['two', 'three']) {
        api.put('secrets', secret('team', 'regcred', token));
        await waitFor(() => tokenOf(api, 'team', 'regcred') === token || undefined, {
          timeoutMs: 2_000,
          message: `the copy to carry ${token}`,
        });
      }
    } finally {
      await controller.stop();
    }
    // Only the secret itself: a list and watches with fieldSelector metadata.name=regcred in its namespace.
    const secretCalls = api.calls.filter((c) => c.resource === 'secrets' && c.namespace !== CONFIG_NS);
    assert.ok(
      secretCalls.every((c) => c.namespace === 'team' && c.name === 'regcred'),
      JSON.stringify(secretCalls),
    );
    assert.ok(secretCalls.some((c) => c.verb === 'watch'));
  });

  it('watches a source while a job references it: one watch for two jobs, stopped when the last lets go', async () => {
    const a = job('team', 'a', ['regcred']);
    const b = job('team', 'b', ['regcred']);
    const { api, controller } = setup([a, b], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    controller.start();
    try {
      await controller.reconcile('team/a');
      await controller.reconcile('team/b');
      await waitFor(() => api.openSecretWatches().length === 1 || undefined, { timeoutMs: 2_000 });
      a.status = { completionTime: '2026-01-01T00:00:00Z', desired: 0 };
      await controller.reconcile('team/a');
      assert.deepEqual(api.openSecretWatches(), ['team/regcred'], 'b still references it');
      b.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
      await controller.reconcile('team/b');
      await waitFor(() => api.openSecretWatches().length === 0 || undefined, { timeoutMs: 2_000 });
      assert.equal(tokenOf(api, 'team', 'regcred'), undefined, 'the copy went with the last reference');
    } finally {
      await controller.stop();
    }
  });

  it('lets go of the copy and the watch of a job that vanished without its finalizer running', async () => {
    const jobs = [job('team', 'j', ['regcred'])];
    const { api, controller } = setup(jobs, []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    controller.start();
    try {
      await controller.reconcile('team/j');
      await waitFor(() => api.openSecretWatches().length === 1 || undefined, { timeoutMs: 2_000 });
      jobs.pop();
      await controller.reconcile('team/j');
      assert.equal(tokenOf(api, 'team', 'regcred'), undefined);
      await waitFor(() => api.openSecretWatches().length === 0 || undefined, { timeoutMs: 2_000 });
    } finally {
      await controller.stop();
    }
  });

  it('follows a source deleted and created again: the job reports it missing, then the copy comes back', async () => {
    const { api, events, controller } = setup([job('team', 'j', ['regcred'])], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    controller.start();
    try {
      await controller.reconcile('team/j');
      await waitFor(() => api.openSecretWatches().length === 1 || undefined, { timeoutMs: 2_000 });
      api.remove('secrets', 'team', 'regcred');
      await waitFor(() => events.some((e) => e.reason === 'PullSecretNotFound') || undefined, { timeoutMs: 2_000 });
      assert.equal(tokenOf(api, 'team', 'regcred'), undefined, 'the copy of a deleted source goes');
      api.put('secrets', secret('team', 'regcred', 'two'));
      await waitFor(() => tokenOf(api, 'team', 'regcred') === 'two' || undefined, { timeoutMs: 2_000 });
    } finally {
      await controller.stop();
    }
  });

  it('on a 403 keeps the status message and event; once granted, the copy comes within the watch backoff', async () => {
    const { api, clock, events, controller } = setup([job('locked', 'j', ['regcred'])], ['locked']);
    api.put('secrets', secret('locked', 'regcred', 'one'));
    controller.start();
    try {
      await controller.reconcile('locked/j');
      assert.ok(events.some((e) => e.reason === 'PullSecretForbidden'));
      assert.match(api.statuses.at(-1)?.message ?? '', /may not read pull secrets regcred in namespace locked/);
      await waitFor(() => api.calls.some((c) => c.verb === 'list' && c.namespace === 'locked') || undefined, {
        timeoutMs: 2_000,
      });
      api.forbidden.delete('locked'); // an admin binds the reader ClusterRole in "locked"
      for (let waited = 0; waited <= 30_000 && tokenOf(api, 'locked', 'regcred') === undefined; waited += 1_000) {
        await clock.advance(1_000);
      }
      await waitFor(() => tokenOf(api, 'locked', 'regcred') === 'one' || undefined, { timeoutMs: 2_000 });
      await waitFor(() => !/may not read/.test(api.statuses.at(-1)?.message ?? '') || undefined, { timeoutMs: 2_000 });
    } finally {
      await controller.stop();
    }
  });

  it('a grant revoked while watching: the next watch answers 403, the job reports it and lets go of the copy', async () => {
    const { api, clock, events, controller } = setup([job('team', 'j', ['regcred'])], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    controller.start();
    try {
      await controller.reconcile('team/j');
      await waitFor(() => api.openSecretWatches().length === 1 || undefined, { timeoutMs: 2_000 });
      assert.equal(tokenOf(api, 'team', 'regcred'), 'one');
      api.forbidden.add('team');
      for (const w of api.secretWatches) w.stream.end(); // the server ends the stream; the informer watches again
      await clock.advance(1_000); // (after a pause: the stream carried no event)
      await waitFor(() => events.some((e) => e.reason === 'PullSecretForbidden') || undefined, { timeoutMs: 2_000 });
      await waitFor(() => tokenOf(api, 'team', 'regcred') === undefined || undefined, { timeoutMs: 2_000 });
      assert.match(api.statuses.at(-1)?.message ?? '', /may not read pull secrets regcred in namespace team/);
    } finally {
      await controller.stop();
    }
  });

  it('words the status message and grant command', () => {
    assert.equal(grantCommand('locked', 'kruise-system'), GRANT);
    assert.equal(
      withSecretProblems('job is running, no progress', { namespace: 'ns', missing: [], forbidden: [] }, 'x'),
      'job is running, no progress',
    );
    assert.match(
      withSecretProblems('job has completed', { namespace: 'ns', missing: ['a'], forbidden: ['b'] }, 'ops'),
      /^job has completed; pull secrets not found in namespace ns: a; kruise-controller may not read pull secrets b in namespace ns .* --serviceaccount=ops:kruise-controller -n ns$/,
    );
  });
});

describe('ImagePullJob tag writes', () => {
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  it('writes each NodeImage from the cache that holds its latest version: a PUT each, no read first', async () => {
    const { api, controller } = setup([job('team', 'j', [])], []);
    await controller.reconcile('team/j');
    const calls = api.calls.filter((c) => c.resource === 'nodeimages');
    assert.deepEqual(calls.map((c) => `${c.verb} ${c.name}`).sort(), ['update n1', 'update n2']);
    const ni = api.objects.get('nodeimages//n2') as NodeImage;
    assert.equal(ni.spec?.images?.nginx?.tags?.[0]?.tag, '1.25');
  });
});

describe('ImagePullJob controller stop', () => {
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  it('leaves the NodeImage writes not yet begun when stopped mid-reconcile (the next leader writes them)', async () => {
    const big = job('team', 'j', []);
    big.spec = { ...big.spec, parallelism: 40 };
    const { api, controller } = setup([big], []);
    for (let i = 3; i <= 40; i++) api.put('nodeimages', nodeImage(`n${i}`));
    const update = api.client.update.bind(api.client);
    let stopping: Promise<void> | undefined;
    api.client.update = ((...args: Parameters<typeof update>) => {
      stopping ??= controller.stop();
      return update(...args);
    }) as typeof update;
    await controller.reconcile('team/j');
    await stopping;
    const writes = api.calls.filter((c) => c.verb === 'update' && c.resource === 'nodeimages').length;
    assert.ok(writes >= 1 && writes <= 16, `${writes} NodeImage writes after stop: only those already begun`);
  });
});

describe('ImagePullJob waiting for the NodeImage cache', () => {
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  it("waits for a NodeImage whose cache lacks a write of ours and goes on at that NodeImage's next event, not a poll", async () => {
    const handlers: InformerHandlers<NodeImage>[] = [];
    const { api, controller, nodeImageExpectations } = setup([job('team', 'j', [])], [], handlers);
    nodeImageExpectations.expect('n1', '99'); // written by us, not in the cache yet
    controller.start();
    try {
      assert.deepEqual(await controller.reconcile('team/j'), { requeueAfter: 1000 });
      assert.equal(api.calls.filter((c) => c.resource === 'nodeimages').length, 0, 'nothing written while waiting');
      const n1 = api.objects.get('nodeimages//n1') as NodeImage;
      const seen = { ...n1, metadata: { ...n1.metadata, resourceVersion: '99' } };
      api.objects.set('nodeimages//n1', seen);
      for (const h of handlers) h.onUpdate?.(n1, seen); // the watch delivers our write (the fake clock never moves)
      await waitFor(() => api.calls.filter((c) => c.verb === 'update' && c.resource === 'nodeimages').length === 2, {
        timeoutMs: 1000,
      });
    } finally {
      await controller.stop();
    }
  });
});
