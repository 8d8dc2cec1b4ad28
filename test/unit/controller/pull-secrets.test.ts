// Pull-secret copies with least privilege, against an in-memory fake API that answers 403 where the controller was
// not granted `get` on secrets (the emulator has no RBAC): the source is read by a named GET (never listed), a 403
// leaves the job pulling without that secret while its status and a Warning event name the namespace and the
// `kubectl create rolebinding` command; the periodic resync (FakeClock) carries a source change into the copy.
import assert from 'node:assert/strict';
import { CONTROLLER_USAGE, parseControllerCommandLine } from '../../../src/controller/options.js';
import { ImagePullJobController } from '../../../src/controller/imagepulljob/controller.js';
import { copyNameFor, PullSecretSync, referencesOf } from '../../../src/controller/pullsecrets/secret-sync.js';
import { grantCommand, withSecretProblems } from '../../../src/controller/pullsecrets/source-access.js';
import type { ImagePullJobObject, NodeImageObject, SecretObject } from '../../../src/controller/resources.js';
import { ResourceVersionExpectations } from '../../../src/controller/shared/expectations.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { EventRecorder } from '../../../src/kube/event-recorder.js';
import type { Informer } from '../../../src/kube/informer/informer.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';

const CONFIG_NS = 'kruise-daemon-config';
const GRANT =
  'kubectl create rolebinding kruise-controller-pull-secret-reader --clusterrole=kruise-controller-pull-secret-reader ' +
  '--serviceaccount=kruise-system:kruise-controller -n locked';

interface Call {
  verb: string;
  resource: string;
  namespace?: string;
  name: string;
}

/** An API holding objects by resource/namespace/name; GET of a secret in a namespace in `forbidden` answers 403. */
class FakeApi {
  readonly objects = new Map<string, KubeObject>();
  readonly calls: Call[] = [];
  /** The status of every status patch, in order. */
  readonly statuses: { message?: string }[] = [];
  readonly client: KubeClient;
  private rv = 1;

  constructor(private readonly forbidden: ReadonlySet<string>) {
    this.client = this.makeClient();
  }

  put<T extends KubeObject>(resource: string, obj: T): void {
    obj.metadata = { ...obj.metadata, resourceVersion: String(this.rv++) };
    this.objects.set(`${resource}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`, structuredClone(obj));
  }

  private makeClient(): KubeClient {
    const key = (rt: ResourceType, ns: string | undefined, name: string): string =>
      `${rt.resource}/${ns ?? ''}/${name}`;
    const fail = (code: number, reason: string, verb: string, path: string): ApiError =>
      ApiError.fromResponse(code, JSON.stringify({ kind: 'Status', code, reason, message: path }), verb, path);
    const record = (verb: string, rt: ResourceType, namespace: string | undefined, name: string): void => {
      this.calls.push({ verb, resource: rt.resource, namespace, name });
    };
    return {
      get: async (rt: ResourceType, name: string, opts: { namespace?: string } = {}) => {
        record('get', rt, opts.namespace, name);
        if (rt.resource === 'secrets' && this.forbidden.has(opts.namespace ?? '')) {
          throw fail(403, 'Forbidden', 'GET', `secrets "${name}" is forbidden`);
        }
        const o = this.objects.get(key(rt, opts.namespace, name));
        if (!o) throw fail(404, 'NotFound', 'GET', name);
        return structuredClone(o);
      },
      list: async (rt: ResourceType) => {
        record('list', rt, undefined, '');
        throw new Error('the controller must not list');
      },
      create: async (rt: ResourceType, obj: KubeObject) => {
        record('create', rt, obj.metadata?.namespace, obj.metadata?.name ?? '');
        if (this.objects.has(key(rt, obj.metadata?.namespace, obj.metadata?.name ?? ''))) {
          throw fail(409, 'AlreadyExists', 'POST', obj.metadata?.name ?? '');
        }
        this.put(rt.resource, obj);
        return structuredClone(obj);
      },
      update: async (rt: ResourceType, obj: KubeObject) => {
        record('update', rt, obj.metadata?.namespace, obj.metadata?.name ?? '');
        this.put(rt.resource, obj);
        return structuredClone(obj);
      },
      delete: async (rt: ResourceType, name: string, opts: { namespace?: string } = {}) => {
        record('delete', rt, opts.namespace, name);
        this.objects.delete(key(rt, opts.namespace, name));
        return {};
      },
      // Status patches come back without a resourceVersion, so no cache expectation is left waiting.
      patch: async (rt: ResourceType, name: string, body: { status?: unknown }, opts: { namespace?: string } = {}) => {
        record('patch', rt, opts.namespace, name);
        this.statuses.push(body.status as { message?: string });
        const o = this.objects.get(key(rt, opts.namespace, name)) as (KubeObject & { status?: unknown }) | undefined;
        return { ...o, metadata: { ...o?.metadata, resourceVersion: undefined }, status: body.status };
      },
    } as unknown as KubeClient;
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

/** An informer over whatever `items()` returns (get by key, list, no handlers fired). */
function cacheOf<T extends KubeObject>(items: () => T[]): Informer<T> {
  const keyOf = (o: T): string =>
    o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata?.name ?? '');
  return {
    get: (key: string) => items().find((o) => keyOf(o) === key),
    list: () => items(),
    addHandlers: () => () => undefined,
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

function job(namespace: string, name: string, pullSecrets: string[]): ImagePullJobObject {
  return {
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      resourceVersion: '1',
      finalizers: ['apps.kruise.io/deletion-protection'],
    },
    spec: { image: 'nginx:1.25', pullSecrets, parallelism: 10, completionPolicy: { type: 'Never' } },
  } as ImagePullJobObject;
}

function nodeImage(name: string): NodeImageObject {
  return { metadata: { name, resourceVersion: '1' }, spec: {} } as NodeImageObject;
}

interface Recorded {
  type: string;
  reason: string;
  message: string;
}

function setup(jobs: ImagePullJobObject[], forbidden: string[], resyncMs?: number) {
  const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
  const api = new FakeApi(new Set(forbidden));
  const events: Recorded[] = [];
  for (const ni of [nodeImage('n1'), nodeImage('n2')]) api.put('nodeimages', ni);
  const copies = cacheOf<SecretObject>(() => api.copies());
  const nodeImages = cacheOf<NodeImageObject>(() =>
    [...api.objects.entries()].filter(([k]) => k.startsWith('nodeimages/')).map(([, o]) => o as NodeImageObject),
  );
  const metrics = controllerMetrics(createRegistry());
  const controller = new ImagePullJobController({
    client: api.client,
    jobs: cacheOf(() => jobs),
    nodeImages,
    secretCopies: copies,
    secretSync: new PullSecretSync(api.client, copies, metrics),
    secretResyncMs: resyncMs,
    nodeImageExpectations: new ResourceVersionExpectations(clock),
    jobExpectations: new ResourceVersionExpectations(clock),
    events: {
      event: (_o: KubeObject, type: string, reason: string, message: string) => events.push({ type, reason, message }),
    } as unknown as EventRecorder,
    clock,
    logger: silentLogger,
    metrics,
    workers: 1,
  });
  return { clock, api, events, controller };
}

describe('pull secrets: least privilege', () => {
  it('reads a source by a named GET and never lists secrets', async () => {
    const { api, controller } = setup([job('team', 'j', ['regcred'])], []);
    api.put('secrets', secret('team', 'regcred', 'one'));
    await controller.reconcile('team/j');
    assert.equal(api.sourceGets('team', 'regcred'), 1);
    assert.ok(!api.calls.some((c) => c.verb === 'list'));
    const copy = api.copies().find((c) => c.metadata?.name === copyNameFor('team', 'regcred'));
    assert.deepEqual(referencesOf(copy!), ['team/j']);
  });

  it('on 403 reports the namespace and the grant command in the status and a Warning event; the rest carries on', async () => {
    const jobs = [job('locked', 'j', ['regcred', 'other'])];
    const { api, events, controller } = setup(jobs, ['locked']);
    const sync = new PullSecretSync(
      api.client,
      cacheOf(() => api.copies()),
      controllerMetrics(createRegistry()),
    );
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
    const ni = api.objects.get('nodeimages//n1') as NodeImageObject;
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
    const ni = api.objects.get('nodeimages//n1') as NodeImageObject;
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
    const sync = new PullSecretSync(
      revoked.client,
      cacheOf(() => revoked.copies()),
      controllerMetrics(createRegistry()),
    );
    const result = await sync.claim('team', 'team/j', ['regcred']);
    assert.deepEqual(result.forbidden, ['regcred']);
    assert.deepEqual(revoked.copies(), []);
  });

  it('resyncs active jobs periodically (FakeClock): a source change reaches the copy within the period', async () => {
    const jobs = [job('team', 'j', ['regcred']), job(CONFIG_NS, 'own', ['local'])];
    const done = job('team', 'done', ['regcred']);
    done.status = { completionTime: '2026-01-01T00:00:00Z', desired: 0 };
    jobs.push(done);
    const { api, clock, controller } = setup(jobs, [], 60_000);
    api.put('secrets', secret('team', 'regcred', 'one'));
    await controller.reconcile('team/j');
    const copyKey = `secrets/${CONFIG_NS}/${copyNameFor('team', 'regcred')}`;
    const token = (): string =>
      Buffer.from((api.objects.get(copyKey) as SecretObject).data?.['.dockerconfigjson'] ?? '', 'base64').toString();
    assert.equal(token(), 'one');
    const before = api.sourceGets('team', 'regcred');

    controller.start();
    try {
      const source = api.objects.get('secrets/team/regcred') as SecretObject;
      api.put('secrets', { ...source, data: { '.dockerconfigjson': Buffer.from('two').toString('base64') } });
      await clock.advance(59_000);
      assert.equal(api.sourceGets('team', 'regcred'), before, 'nothing before the period');
      assert.equal(token(), 'one');
      await clock.advance(1_000);
      await waitFor(() => token() === 'two' || undefined);
      // Only the active job outside kruise-daemon-config re-read its source; the completed one did not.
      assert.equal(api.sourceGets('team', 'regcred'), before + 1);
      assert.equal(api.sourceGets(CONFIG_NS, 'local'), 0);
      await clock.advance(60_000);
      await waitFor(() => api.sourceGets('team', 'regcred') === before + 2 || undefined);
    } finally {
      await controller.stop();
    }
    assert.equal(clock.pendingTimers(), 0, 'stop cancels the resync timer');
  });

  it('takes the resync period from --pull-secret-resync-period (default 5m, at least 1s)', () => {
    const period = (args: string[]): number | undefined => {
      const parsed = parseControllerCommandLine(args, {});
      return parsed.kind === 'run' ? parsed.options.pullSecretResyncMs : undefined;
    };
    assert.equal(period([]), 300_000);
    assert.equal(period(['--pull-secret-resync-period', '30s']), 30_000);
    assert.throws(
      () => period(['--pull-secret-resync-period', '500ms']),
      /--pull-secret-resync-period: must be at least 1s/,
    );
    assert.throws(() => period(['--pull-secret-resync-period', 'soon']), /--pull-secret-resync-period/);
    assert.match(CONTROLLER_USAGE, /--pull-secret-resync-period DUR/);
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
