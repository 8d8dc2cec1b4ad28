// emulator: the subject under test (the emulator's own component tests)
// Emulator semantics over HTTP, in-process: resourceVersions and conflicts, watch resume and expiry, bookmarks,
// selectors, status subresource, finalizers, garbage collection, CRD lifecycle, pods, namespaces.
import assert from 'node:assert/strict';
import { admissionDenied, startApiServer, type ApiServer } from '../../cluster/apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { configMap, widget, widgetCrd, WIDGETS } from './fixtures.js';
import { RawClient, type WatchReader } from './http-client.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('API emulator semantics', function () {
  let server: ApiServer;
  let api: RawClient;
  const watches: WatchReader[] = [];

  beforeEach(async () => {
    server = await startApiServer({ watchWindow: 50, bookmarkIntervalMs: 100 });
    api = new RawClient(server.url);
  });
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    await server.close();
  });

  async function watch(path: string, headers?: Record<string, string>): Promise<WatchReader> {
    const w = await api.watch(path, headers);
    watches.push(w);
    return w;
  }

  async function installWidgets(): Promise<void> {
    await api.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
  }

  describe('objects and resourceVersions', () => {
    it('fills uid, creationTimestamp, resourceVersion; generateName makes a unique name', async () => {
      const a = await api.create(CMS, { metadata: { generateName: 'gen-' }, data: {} });
      const b = await api.create(CMS, { metadata: { generateName: 'gen-' }, data: {} });
      assert.match(a.metadata.name, /^gen-[a-z0-9]{5}$/);
      assert.notEqual(a.metadata.name, b.metadata.name);
      assert.match(a.metadata.uid, /^[0-9a-f-]{36}$/);
      assert.match(a.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(a.kind, 'ConfigMap');
      assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
      const list = await api.get(CMS);
      assert.equal(list.body.kind, 'ConfigMapList');
      assert.equal(list.body.metadata.resourceVersion, server.resourceVersion());
      assert.equal(list.body.items.length, 2);
    });

    it('answers 409 AlreadyExists, 404 NotFound and 404 for a missing namespace', async () => {
      await api.create(CMS, configMap('x'));
      const dup = await api.post(CMS, configMap('x'));
      assert.equal(dup.status, 409);
      assert.equal(dup.body.reason, 'AlreadyExists');
      assert.equal(dup.body.message, 'configmaps "x" already exists');
      const missing = await api.get(`${CMS}/nope`);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.kind, 'Status');
      assert.equal(missing.body.message, 'configmaps "nope" not found');
      const noNs = await api.post('/api/v1/namespaces/ghost/configmaps', configMap('y'));
      assert.equal(noNs.status, 404);
      assert.equal(noNs.body.message, 'namespaces "ghost" not found');
    });

    it('rejects an update with a stale resourceVersion with 409 Conflict', async () => {
      const cm = await api.create(CMS, configMap('c'));
      const first = await api.put(`${CMS}/c`, { ...cm, data: { k: 'v2' } });
      assert.equal(first.status, 200);
      const stale = await api.put(`${CMS}/c`, { ...cm, data: { k: 'v3' } });
      assert.equal(stale.status, 409);
      assert.equal(stale.body.reason, 'Conflict');
      assert.match(stale.body.message, /the object has been modified/);
      const noop = await api.put(`${CMS}/c`, first.body);
      assert.equal(noop.body.metadata.resourceVersion, first.body.metadata.resourceVersion, 'no-op writes keep the RV');
    });

    it('validates built-in kinds with 422 Invalid and field causes', async () => {
      const bad = await api.post(CMS, { metadata: { name: 'Bad_Name' }, data: { 'bad key': 'v' } });
      assert.equal(bad.status, 422);
      assert.equal(bad.body.reason, 'Invalid');
      assert.deepEqual(
        bad.body.details.causes.map((c: any) => c.field),
        ['metadata.name', 'data[bad key]'],
      );
      const pod = await api.post('/api/v1/namespaces/default/pods', {
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c' }] },
      });
      assert.equal(pod.status, 422);
      assert.equal(pod.body.message, 'Pod "p" is invalid: spec.containers[0].image: Required value');
    });

    it('pages lists with limit and continue', async () => {
      for (const n of ['a', 'b', 'c', 'd', 'e']) await api.create(CMS, configMap(n));
      const names: string[] = [];
      let cont = '';
      let pages = 0;
      do {
        const page = await api.get(`${CMS}?limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        names.push(...page.body.items.map((i: any) => i.metadata.name));
        cont = page.body.metadata.continue ?? '';
        pages++;
      } while (cont);
      assert.deepEqual(names, ['a', 'b', 'c', 'd', 'e']);
      assert.equal(pages, 3);
    });

    it('deletes a collection by label selector', async () => {
      await api.create(CMS, configMap('keep', { labels: { app: 'x' } }));
      await api.create(CMS, configMap('drop1', { labels: { app: 'y' } }));
      await api.create(CMS, configMap('drop2', { labels: { app: 'y' } }));
      const reply = await api.delete(`${CMS}?labelSelector=app%3Dy`);
      assert.equal(reply.status, 200);
      assert.equal(reply.body.items.length, 2);
      const left = await api.get(CMS);
      assert.deepEqual(
        left.body.items.map((i: any) => i.metadata.name),
        ['keep'],
      );
    });
  });

  describe('watch', () => {
    it('resumes from a resourceVersion with no gap and no duplicate', async () => {
      await api.create(CMS, configMap('a'));
      const list = await api.get(CMS);
      const rv = list.body.metadata.resourceVersion;
      await api.patch(`${CMS}/a`, { data: { k: '2' } });
      await api.create(CMS, configMap('b'));
      await api.delete(`${CMS}/a`);
      const w = await watch(`${CMS}?watch=true&resourceVersion=${rv}`);
      const events = await w.waitForEvents(3);
      await api.create(CMS, configMap('c'));
      await w.waitForEvents(4);
      assert.deepEqual(w.summary(), [
        ['MODIFIED', 'a'],
        ['ADDED', 'b'],
        ['DELETED', 'a'],
        ['ADDED', 'c'],
      ]);
      const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion));
      assert.deepEqual(
        rvs,
        [...rvs].sort((x, y) => x - y),
        'in resourceVersion order',
      );
      assert.equal(rvs[0], Number(rv) + 1, 'starts right after the given resourceVersion');
      assert.equal(events[0]!.object.kind, 'ConfigMap');
    });

    it('sends 200 then an ERROR 410 Expired event for a resourceVersion older than the window', async () => {
      const first = await api.create(CMS, configMap('a'));
      for (let i = 0; i < 60; i++) await api.patch(`${CMS}/a`, { data: { k: String(i) } });
      const w = await watch(`${CMS}?watch=1&resourceVersion=${first.metadata.resourceVersion}`);
      assert.equal(w.status, 200);
      await w.waitForEnd();
      assert.equal(w.events.length, 1);
      assert.equal(w.events[0]!.type, 'ERROR');
      assert.equal(w.events[0]!.object.code, 410);
      assert.equal(w.events[0]!.object.reason, 'Expired');
    });

    it('expires every older resourceVersion after faults.compact()', async () => {
      await api.create(CMS, configMap('a'));
      const rv = server.resourceVersion();
      await api.create(CMS, configMap('b'));
      server.faults.compact();
      const old = await watch(`${CMS}?watch=true&resourceVersion=${rv}`);
      await old.waitForEnd();
      assert.equal(old.events[0]!.object.code, 410);
      const current = await watch(`${CMS}?watch=true&resourceVersion=${server.resourceVersion()}`);
      await api.create(CMS, configMap('c'));
      await current.waitForEvents(1);
      assert.deepEqual(current.summary(), [['ADDED', 'c']]);
    });

    it('sends BOOKMARK events when allowed and ends at timeoutSeconds', async () => {
      await api.create(CMS, configMap('a'));
      const w = await watch(`${CMS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`);
      await waitFor(() => w.events.some((e) => e.type === 'BOOKMARK'), { message: 'a bookmark' });
      const bookmark = w.events.find((e) => e.type === 'BOOKMARK')!;
      assert.equal(bookmark.object.kind, 'ConfigMap');
      assert.equal(bookmark.object.apiVersion, 'v1');
      assert.equal(bookmark.object.metadata.resourceVersion, server.resourceVersion());
      await w.waitForEnd();
      assert.equal(w.events.at(-1)!.type, 'BOOKMARK');
      const plain = await watch(`${CMS}?watch=true`);
      await plain.waitForEvents(1);
      assert.ok(!plain.events.some((e) => e.type === 'BOOKMARK'));
    });

    it('with a selector, sends DELETED when an object leaves it and ADDED when it enters', async () => {
      const w = await watch(`${CMS}?watch=true&labelSelector=app%3Dx`);
      await api.create(CMS, configMap('a', { labels: { app: 'y' } }));
      await api.patch(`${CMS}/a`, { metadata: { labels: { app: 'x' } } });
      await api.patch(`${CMS}/a`, { data: { k: 'changed' } });
      await api.patch(`${CMS}/a`, { metadata: { labels: { app: 'z' } } });
      await api.delete(`${CMS}/a`);
      await api.create(CMS, configMap('b', { labels: { app: 'x' } }));
      await w.waitForEvents(4);
      assert.deepEqual(w.summary(), [
        ['ADDED', 'a'],
        ['MODIFIED', 'a'],
        ['DELETED', 'a'],
        ['ADDED', 'b'],
      ]);
      assert.equal(w.events[2]!.object.metadata.labels.app, 'x', 'DELETED carries the last matching state');
    });

    it('filters watches and lists by field selectors, and rejects unknown fields', async () => {
      const pods = '/api/v1/namespaces/default/pods';
      const w = await watch(`/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1`);
      const pod = (name: string, nodeName?: string): any => ({
        metadata: { name },
        spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
      });
      await api.create(pods, pod('on-n1', 'n1'));
      await api.create(pods, pod('on-n2', 'n2'));
      await api.create(pods, pod('unbound'));
      await w.waitForEvents(1);
      const list = await api.get('/api/v1/pods?fieldSelector=spec.nodeName%3Dn1%2Cstatus.phase%3DPending');
      assert.deepEqual(
        list.body.items.map((p: any) => p.metadata.name),
        ['on-n1'],
      );
      assert.deepEqual(w.summary(), [['ADDED', 'on-n1']]);
      const bad = await api.get('/api/v1/pods?fieldSelector=spec.bogus%3Dx');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.message, 'field label not supported: spec.bogus');
    });

    it('watches one object by name and ends every stream on closeAllWatches', async () => {
      await api.create(CMS, configMap('one'));
      await api.create(CMS, configMap('two'));
      const w = await watch(`${CMS}/one?watch=true`);
      await w.waitForEvents(1);
      assert.deepEqual(w.summary(), [['ADDED', 'one']]);
      await waitFor(() => server.openWatches() === 1);
      server.faults.closeAllWatches();
      await w.waitForEnd();
      assert.equal(server.openWatches(), 0);
    });
  });

  describe('deletion, finalizers and garbage collection', () => {
    it('keeps an object with finalizers until the last one is removed', async () => {
      const w = await watch(`${CMS}?watch=true`);
      await api.create(CMS, configMap('fin', { finalizers: ['test.kruise.io/hold'] }));
      const del = await api.delete(`${CMS}/fin`);
      assert.equal(del.status, 202);
      assert.ok(del.body.metadata.deletionTimestamp);
      assert.equal(del.body.metadata.deletionGracePeriodSeconds, 0);
      const addMore = await api.patch(`${CMS}/fin`, { metadata: { finalizers: ['test.kruise.io/hold', 'x.io/more'] } });
      assert.equal(addMore.status, 422);
      assert.match(addMore.body.message, /no new finalizers can be added if the object is being deleted/);
      const done = await api.patch(`${CMS}/fin`, { metadata: { finalizers: null } });
      assert.equal(done.status, 200);
      assert.equal((await api.get(`${CMS}/fin`)).status, 404);
      await w.waitForEvents(3);
      assert.deepEqual(
        w.summary().map(([t]) => t),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
    });

    it('deletes dependents in the background once their owner is gone', async () => {
      const owner = await api.create(CMS, configMap('owner'));
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid };
      await api.create(CMS, configMap('dep1', { ownerReferences: [ref] }));
      const other = await api.create(CMS, configMap('other-owner'));
      const ref2 = { apiVersion: 'v1', kind: 'ConfigMap', name: 'other-owner', uid: other.metadata.uid };
      await api.create(CMS, configMap('dep2', { ownerReferences: [ref, ref2] }));
      await api.delete(`${CMS}/owner`, { propagationPolicy: 'Background' });
      await waitFor(async () => (await api.get(`${CMS}/dep1`)).status === 404, { message: 'dep1 collected' });
      await waitFor(async () => (await api.get(`${CMS}/dep2`)).body.metadata.ownerReferences?.length === 1, {
        message: 'dep2 loses the dangling reference',
      });
      const dep2 = await api.get(`${CMS}/dep2`);
      assert.equal(dep2.body.metadata.ownerReferences[0].uid, other.metadata.uid);
    });

    it('holds a Foreground-deleted owner until its dependents are gone', async () => {
      const owner = await api.create(CMS, configMap('fg-owner'));
      const ref = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'fg-owner',
        uid: owner.metadata.uid,
        blockOwnerDeletion: true,
      };
      await api.create(CMS, configMap('fg-dep', { ownerReferences: [ref], finalizers: ['test.kruise.io/hold'] }));
      const del = await api.delete(`${CMS}/fg-owner`, { propagationPolicy: 'Foreground' });
      assert.equal(del.status, 202);
      assert.deepEqual(del.body.metadata.finalizers, ['foregroundDeletion']);
      await waitFor(async () => Boolean((await api.get(`${CMS}/fg-dep`)).body.metadata.deletionTimestamp));
      assert.equal((await api.get(`${CMS}/fg-owner`)).status, 200, 'owner waits for its dependent');
      await api.patch(`${CMS}/fg-dep`, { metadata: { finalizers: null } });
      await waitFor(async () => (await api.get(`${CMS}/fg-owner`)).status === 404, { message: 'owner gone' });
    });

    it('orphans dependents with propagationPolicy Orphan', async () => {
      const owner = await api.create(CMS, configMap('o-owner'));
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'o-owner', uid: owner.metadata.uid };
      await api.create(CMS, configMap('o-dep', { ownerReferences: [ref] }));
      await api.delete(`${CMS}/o-owner`, { propagationPolicy: 'Orphan' });
      await waitFor(async () => (await api.get(`${CMS}/o-owner`)).status === 404, { message: 'owner gone' });
      await server.controllersIdle();
      const dep = await api.get(`${CMS}/o-dep`);
      assert.equal(dep.status, 200);
      assert.equal(dep.body.metadata.ownerReferences, undefined);
    });

    it('keeps a bound pod terminating until a delete with gracePeriodSeconds=0; unbound pods go at once', async () => {
      const pods = '/api/v1/namespaces/default/pods';
      const spec = (nodeName?: string): any => ({ nodeName, containers: [{ name: 'c', image: 'busybox' }] });
      await api.create('/api/v1/nodes', { metadata: { name: 'n1' } });
      await api.create(pods, { metadata: { name: 'bound' }, spec: spec('n1') });
      await api.create(pods, { metadata: { name: 'ghost-node' }, spec: spec('no-such-node') });
      await api.create(pods, { metadata: { name: 'free' }, spec: spec() });
      const graceful = await api.delete(`${pods}/bound`);
      assert.equal(graceful.status, 202);
      assert.equal(graceful.body.metadata.deletionGracePeriodSeconds, 30);
      const still = await api.get(`${pods}/bound`);
      assert.equal(still.status, 200);
      assert.ok(still.body.metadata.deletionTimestamp);
      const force = await api.delete(`${pods}/bound?gracePeriodSeconds=0`);
      assert.equal(force.status, 200);
      assert.equal((await api.get(`${pods}/bound`)).status, 404);
      assert.equal((await api.delete(`${pods}/ghost-node`)).status, 200, 'no node to finish it: deleted at once');
      const free = await api.delete(`${pods}/free`);
      assert.equal(free.status, 200);
      assert.equal((await api.get(`${pods}/free`)).status, 404);
    });

    it('deletes the pods of a deleted node, binds pods, and keeps pod specs immutable', async () => {
      const pods = '/api/v1/namespaces/default/pods';
      await api.create('/api/v1/nodes', { metadata: { name: 'n9' } });
      await api.create(pods, { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      const bind = await api.post(`${pods}/p/binding`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'p' },
        target: { kind: 'Node', name: 'n9' },
      });
      assert.equal(bind.status, 201);
      const again = await api.post(`${pods}/p/binding`, { target: { kind: 'Node', name: 'n8' } });
      assert.equal(again.status, 409);
      const bound = await api.get(`${pods}/p`);
      assert.equal(bound.body.spec.nodeName, 'n9');
      assert.equal(bound.body.status.phase, 'Pending');
      const image = await api.patch(
        `${pods}/p`,
        { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } },
        'strategic-merge',
      );
      assert.equal(image.status, 200, JSON.stringify(image.body));
      const forbidden = await api.patch(`${pods}/p`, { spec: { restartPolicy: 'Never' } }, 'strategic-merge');
      assert.equal(forbidden.status, 422);
      await api.delete('/api/v1/nodes/n9');
      await waitFor(async () => (await api.get(`${pods}/p`)).status === 404, {
        message: 'pod of the gone node deleted',
      });
    });

    it('terminates a namespace: contents deleted, then the namespace', async () => {
      await api.create('/api/v1/namespaces', { metadata: { name: 'doomed' } });
      await api.create('/api/v1/namespaces/doomed/configmaps', configMap('x'));
      const del = await api.delete('/api/v1/namespaces/doomed');
      assert.equal(del.status, 202);
      assert.equal(del.body.status.phase, 'Terminating');
      const refused = await api.post('/api/v1/namespaces/doomed/configmaps', configMap('y'));
      assert.ok(refused.status === 403 || refused.status === 404, String(refused.status));
      await waitFor(async () => (await api.get('/api/v1/namespaces/doomed')).status === 404, {
        message: 'namespace gone',
      });
      assert.equal((await api.get('/api/v1/namespaces/doomed/configmaps/x')).status, 404);
      const protectedNs = await api.delete('/api/v1/namespaces/default');
      assert.equal(protectedNs.status, 403);
    });
  });

  describe('custom resources', () => {
    it('serves a CRD at once, sets its conditions, enforces its schema with defaults and pruning', async () => {
      await installWidgets();
      const crd = await api.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.kruise.io');
      const conditions = Object.fromEntries(crd.body.status.conditions.map((c: any) => [c.type, c.status]));
      assert.deepEqual(conditions, { NamesAccepted: 'True', Established: 'True' });
      assert.deepEqual(crd.body.status.storedVersions, ['v1']);
      const created = await api.create(WIDGETS, { ...widget('w1'), spec: { image: 'x', junk: 1 } });
      assert.equal(created.spec.size, 1, 'default applied');
      assert.equal(created.spec.junk, undefined, 'unknown field pruned');
      assert.equal(created.metadata.generation, 1);
      const strict = await api.request('POST', `${WIDGETS}?fieldValidation=Strict`, {
        ...widget('w2'),
        spec: { image: 'x', junk: 1 },
      });
      assert.equal(strict.status, 400);
      assert.match(strict.body.message, /unknown field "spec.junk"/);
      const bad = await api.post(WIDGETS, widget('w3', { size: 99, color: 'pink' }));
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.body.details.causes.map((c: any) => c.field).sort(), ['spec.color', 'spec.size']);
      assert.match(bad.body.message, /^Widget.test.kruise.io "w3" is invalid: \[/);
      const v1beta1 = await api.get('/apis/test.kruise.io/v1beta1/namespaces/default/widgets/w1');
      assert.equal(v1beta1.body.apiVersion, 'test.kruise.io/v1beta1');
      const smp = await api.patch(`${WIDGETS}/w1`, { spec: { size: 2 } }, 'strategic-merge');
      assert.equal(smp.status, 415);
      assert.equal(smp.body.reason, 'UnsupportedMediaType');
    });

    it('applies status subresource rules and bumps generation on spec changes only', async () => {
      await installWidgets();
      await api.create(WIDGETS, widget('w'));
      const withStatus = await api.patch(`${WIDGETS}/w`, { spec: { size: 2 }, status: { phase: 'Ignored' } });
      assert.equal(withStatus.body.status, undefined, 'status ignored on the main resource');
      assert.equal(withStatus.body.metadata.generation, 2);
      const status = await api.patch(`${WIDGETS}/w/status`, { spec: { size: 9 }, status: { phase: 'Ready' } });
      assert.equal(status.status, 200);
      assert.equal(status.body.status.phase, 'Ready');
      assert.equal(status.body.spec.size, 2, 'spec ignored on /status');
      assert.equal(status.body.metadata.generation, 2, 'status writes keep generation');
      const labels = await api.patch(`${WIDGETS}/w`, { metadata: { labels: { a: 'b' } } });
      assert.equal(labels.body.metadata.generation, 2, 'metadata writes keep generation');
      assert.equal(labels.body.status.phase, 'Ready');
      const put = await api.put(`${WIDGETS}/w`, {
        ...labels.body,
        metadata: { ...labels.body.metadata, resourceVersion: undefined },
      });
      assert.equal(put.status, 422, 'custom resources need a resourceVersion on update');
    });

    it('stops serving the kinds of a deleted CRD after deleting their objects', async () => {
      await installWidgets();
      await api.create(WIDGETS, widget('w'));
      const w = await watch(`${WIDGETS}?watch=true`);
      await w.waitForEvents(1);
      const del = await api.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.kruise.io');
      assert.ok(del.status === 200 || del.status === 202);
      await waitFor(async () => (await api.get(WIDGETS)).status === 404, { message: 'widgets no longer served' });
      assert.deepEqual(w.summary(), [
        ['ADDED', 'w'],
        ['DELETED', 'w'],
      ]);
      await w.waitForEnd();
      const groups = await api.get('/apis');
      assert.ok(!groups.body.groups.some((g: any) => g.name === 'test.kruise.io'));
    });
  });

  describe('admission hook point', () => {
    it('runs mutating plugins before validation and validating plugins after; denials are 403', async () => {
      const seen: string[] = [];
      const remove = server.admission.add({
        name: 'test.kruise.io',
        mutate: (req) => {
          seen.push(`${req.operation} ${req.resource.resource} ${req.name}`);
          if (req.operation !== 'CREATE' || !req.object) return undefined;
          return { ...req.object, metadata: { ...req.object.metadata, labels: { injected: 'yes' } } };
        },
        validate: (req) => {
          if (req.name.startsWith('deny-'))
            throw admissionDenied(req, 'test.kruise.io', 'names starting with deny- are refused');
        },
      });
      const created = await api.create(CMS, configMap('mutated'));
      assert.deepEqual(created.metadata.labels, { injected: 'yes' });
      const denied = await api.post(CMS, configMap('deny-me'));
      assert.equal(denied.status, 403);
      assert.equal(denied.body.reason, 'Forbidden');
      assert.match(
        denied.body.message,
        /admission webhook "test.kruise.io" denied the request: names starting with deny-/,
      );
      const badMutation = await api.post(CMS, configMap('INVALID'));
      assert.equal(badMutation.status, 422, 'validation still runs after mutation');
      remove();
      assert.equal((await api.post(CMS, configMap('deny-now-allowed'))).status, 201);
      assert.ok(seen.includes('CREATE configmaps mutated'));
    });
  });

  describe('discovery, faults and restarts', () => {
    it('answers aggregated discovery only with its content type, legacy otherwise', async () => {
      await installWidgets();
      const aggregated = await api.get('/apis', {
        accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
      });
      assert.equal(
        aggregated.headers.get('content-type'),
        'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
      );
      const group = aggregated.body.items.find((i: any) => i.metadata.name === 'test.kruise.io');
      assert.deepEqual(
        group.versions.map((v: any) => v.version),
        ['v1', 'v1beta1'],
      );
      const legacy = await api.get('/apis');
      assert.equal(legacy.body.kind, 'APIGroupList');
      const core = await api.get('/api/v1');
      assert.ok(core.body.resources.some((r: any) => r.name === 'pods/status'));
      const v = await api.get('/version');
      assert.equal(v.body.minor, '32');
      const openapi = await api.get('/openapi/v3/apis/test.kruise.io/v1');
      const patchOp = Object.values(openapi.body.paths as Record<string, any>).find(
        (p) => p.patch?.['x-kubernetes-group-version-kind']?.kind === 'Widget',
      );
      assert.ok(patchOp.patch.parameters.some((p: any) => p.name === 'fieldValidation'));
    });

    it('fails the next matching requests, stalls responses and counts requests', async () => {
      server.faults.failNext(2, 503, { match: (r) => r.method === 'POST' });
      const first = await api.post(CMS, configMap('a'));
      assert.equal(first.status, 503);
      assert.equal(first.body.reason, 'ServiceUnavailable');
      assert.equal((await api.get(CMS)).status, 200, 'GET does not match');
      assert.equal((await api.post(CMS, configMap('a'))).status, 503);
      assert.equal((await api.post(CMS, configMap('a'))).status, 201);
      server.faults.stall(150);
      const t0 = Date.now();
      await api.get(CMS);
      assert.ok(Date.now() - t0 >= 140);
      server.faults.stall(0);
      assert.equal(server.requestCount({ method: 'POST', pathPrefix: CMS }), 3);
      assert.equal(server.requestCount({ method: 'GET' }), 2);
    });

    it('restart keeps data and the port; watches must resume', async () => {
      await api.create(CMS, configMap('survivor'));
      const w = await watch(`${CMS}?watch=true`);
      await w.waitForEvents(1);
      const url = server.url;
      await server.restart();
      await w.waitForEnd();
      assert.equal(server.url, url);
      assert.equal((await api.get(`${CMS}/survivor`)).status, 200);
      await server.stop();
      await assert.rejects(api.get(CMS));
      await server.start();
      assert.equal((await api.get(`${CMS}/survivor`)).status, 200);
    });

    it('persists state to dataFile across processes (a new server loads it)', async () => {
      const { mkdtemp, rm } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const dir = await mkdtemp(`${tmpdir()}/apiserver-data-`);
      const dataFile = `${dir}/state.json`;
      try {
        const first = await startApiServer({ dataFile });
        const client = new RawClient(first.url);
        await client.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
        await client.create(WIDGETS, widget('kept'));
        const rv = first.resourceVersion();
        await first.close();
        const second = await startApiServer({ dataFile });
        try {
          const c2 = new RawClient(second.url);
          const kept = await c2.get(`${WIDGETS}/kept`);
          assert.equal(kept.status, 200);
          assert.ok(Number(second.resourceVersion()) >= Number(rv));
          await c2.create(WIDGETS, widget('later'));
          assert.ok(Number((await c2.get(`${WIDGETS}/later`)).body.metadata.resourceVersion) > Number(rv));
        } finally {
          await second.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
