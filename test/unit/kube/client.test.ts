import assert from 'node:assert/strict';
import { KubeClient } from '../../../src/kube/client.js';
import type { Connection } from '../../../src/kube/credentials/connection.js';
import { ApiError, isAlreadyExists, isConflict, isGone, isNotFound } from '../../../src/kube/errors.js';
import { kubeMetrics } from '../../../src/kube/metrics.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources, resourcePath, type ResourceType } from '../../../src/kube/resource.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeTransport, status } from './support/fake-transport.js';

const conn: Connection = {
  server: 'http://127.0.0.1:1',
  insecureSkipTLSVerify: false,
  auth: { kind: 'none' },
  origin: 'test',
};
const nodeImages: ResourceType = {
  group: 'apps.kruise.io',
  version: 'v1alpha1',
  resource: 'nodeimages',
  namespaced: false,
  kind: 'NodeImage',
};

function setup(handler?: ConstructorParameters<typeof FakeTransport>[0]) {
  const transport = new FakeTransport(handler);
  const registry = createRegistry();
  const metrics = kubeMetrics(registry, 'test_');
  const client = new KubeClient(conn, { transport, metrics });
  return { transport, client, registry, metrics };
}

describe('kube resource paths', () => {
  it('builds core, group, namespaced, cluster and subresource paths', () => {
    assert.equal(
      resourcePath(CoreResources.pods, { namespace: 'ns', name: 'p', subresource: 'status' }),
      '/api/v1/namespaces/ns/pods/p/status',
    );
    assert.equal(resourcePath(CoreResources.pods), '/api/v1/pods');
    assert.equal(resourcePath(nodeImages, { name: 'n1' }), '/apis/apps.kruise.io/v1alpha1/nodeimages/n1');
    assert.equal(
      resourcePath(CoreResources.leases, { namespace: 'kube-system' }),
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases',
    );
  });

  it('refuses names that would escape the path', () => {
    assert.throws(() => resourcePath(CoreResources.pods, { namespace: 'ns', name: '../secrets' }), /invalid name/);
    assert.throws(() => resourcePath(CoreResources.pods, { namespace: 'NS' }), /invalid namespace/);
    assert.throws(() => resourcePath(nodeImages, { namespace: 'x', name: 'n' }), /cluster-scoped/);
  });
});

describe('KubeClient', () => {
  it('lists with every query option and counts the request', async () => {
    const { transport, client, metrics } = setup(() => ({
      status: 200,
      body: { metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'a' } }] },
    }));
    const list = await client.list(CoreResources.pods, {
      namespace: 'default',
      labelSelector: 'app=x,tier!=db',
      fieldSelector: 'spec.nodeName=n1',
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
      limit: 50,
      continue: 'tok',
      timeoutSeconds: 5,
    });
    assert.equal(list.items.length, 1);
    const url = new URL(transport.last().path, 'http://x');
    assert.equal(url.pathname, '/api/v1/namespaces/default/pods');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      labelSelector: 'app=x,tier!=db',
      fieldSelector: 'spec.nodeName=n1',
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
      limit: '50',
      continue: 'tok',
      timeoutSeconds: '5',
    });
    const counted = await metrics.apiRequests.get();
    assert.deepEqual(
      counted.values.map((v) => [v.labels, v.value]),
      [[{ verb: 'list', resource: 'pods', code: '200' }, 1]],
    );
  });

  it('lists all pages by following continue tokens', async () => {
    const pages: Record<string, unknown> = {
      '': { metadata: { resourceVersion: '10', continue: 'p2' }, items: [{ metadata: { name: 'a' } }] },
      p2: { metadata: { resourceVersion: '10', continue: '' }, items: [{ metadata: { name: 'b' } }] },
    };
    const { transport, client } = setup((req) => {
      const cont = new URL(req.path, 'http://x').searchParams.get('continue') ?? '';
      return { status: 200, body: pages[cont] };
    });
    const all = await client.listAll(nodeImages, { limit: 1 });
    assert.deepEqual(
      all.items.map((i) => i.metadata?.name),
      ['a', 'b'],
    );
    assert.equal(all.metadata?.resourceVersion, '10');
    assert.equal(transport.sent.length, 2);
  });

  it('creates with apiVersion and kind filled in, in the object namespace', async () => {
    const { transport, client } = setup((req) => ({ status: 201, body: JSON.parse(req.body!) }));
    const created = await client.create<KubeObject>(
      CoreResources.configMaps,
      { metadata: { name: 'c', namespace: 'ns' } },
      { fieldManager: 'kd' },
    );
    assert.equal(transport.last().method, 'POST');
    assert.equal(transport.last().path, '/api/v1/namespaces/ns/configmaps?fieldManager=kd');
    assert.equal(transport.last().headers?.['Content-Type'], 'application/json');
    assert.equal(created.kind, 'ConfigMap');
    assert.equal(created.apiVersion, 'v1');
  });

  it('sends each patch type with its content type and validates the body', async () => {
    const { transport, client } = setup(() => ({ status: 200, body: {} }));
    const types = {
      merge: 'application/merge-patch+json',
      json: 'application/json-patch+json',
      strategic: 'application/strategic-merge-patch+json',
      apply: 'application/apply-patch+yaml',
    } as const;
    for (const [type, ct] of Object.entries(types)) {
      const body = type === 'json' ? [{ op: 'add', path: '/status/x', value: 1 }] : { status: { x: 1 } };
      await client.patch(nodeImages, 'n1', body, {
        type: type as keyof typeof types,
        subresource: 'status',
        fieldManager: 'kd',
        force: type === 'apply',
      });
      assert.equal(transport.last().headers?.['Content-Type'], ct);
      assert.match(transport.last().path, /^\/apis\/apps.kruise.io\/v1alpha1\/nodeimages\/n1\/status\?fieldManager=kd/);
    }
    assert.match(transport.last().path, /force=true/);
    await assert.rejects(client.patch(nodeImages, 'n1', { a: 1 }, { type: 'json' }), /array/);
    await assert.rejects(client.patch(nodeImages, 'n1', [1], { type: 'merge' }), /must be an object/);
    await assert.rejects(client.patch(nodeImages, 'n1', {}, { type: 'apply' }), /fieldManager/);
  });

  it('updates, updates status and deletes with options', async () => {
    const { transport, client } = setup(() => ({ status: 200, body: {} }));
    await client.updateStatus(CoreResources.pods, { metadata: { name: 'p', namespace: 'ns', resourceVersion: '3' } });
    assert.equal(transport.last().method, 'PUT');
    assert.equal(transport.last().path, '/api/v1/namespaces/ns/pods/p/status');
    await client.delete(CoreResources.pods, 'p', {
      namespace: 'ns',
      propagationPolicy: 'Background',
      preconditions: { uid: 'u1' },
      gracePeriodSeconds: 0,
    });
    assert.equal(transport.last().method, 'DELETE');
    assert.deepEqual(JSON.parse(transport.last().body!), {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u1' },
    });
    await assert.rejects(client.get(CoreResources.pods, 'p'), /namespaced; a namespace is needed/);
  });

  it('turns failures into ApiErrors carrying the Status', async () => {
    const answers = [
      status(404, 'NotFound', 'pods "p" not found'),
      status(409, 'Conflict'),
      status(409, 'AlreadyExists'),
      status(410, 'Expired'),
      { status: 503, body: 'upstream down' },
    ];
    const { client, metrics } = setup(() => answers.shift()!);
    const errs: unknown[] = [];
    for (let i = 0; i < 5; i++)
      errs.push(await client.get(CoreResources.pods, 'p', { namespace: 'ns' }).catch((e: unknown) => e));
    assert.ok(errs.every((e) => e instanceof ApiError));
    const [nf, conflict, exists, gone, unavailable] = errs;
    assert.ok(isNotFound(nf) && !isConflict(nf));
    assert.equal(nf!.status.message, 'pods "p" not found');
    assert.ok(isConflict(conflict) && !isAlreadyExists(conflict));
    assert.ok(isAlreadyExists(exists) && !isConflict(exists));
    assert.ok(isGone(gone));
    assert.equal(unavailable!.code, 503);
    assert.equal(unavailable!.status.message, 'upstream down');
    const codes = (await metrics.apiRequests.get()).values.map((v) => v.labels.code).sort();
    assert.deepEqual(codes, ['404', '409', '410', '503']);
  });

  it('watches: query, events in order, ERROR as ApiError', async () => {
    const { transport, client } = setup(() => ({ status: 200 }));
    const stream = await client.watch(CoreResources.pods, {
      fieldSelector: 'spec.nodeName=n1',
      resourceVersion: '5',
      allowWatchBookmarks: true,
      timeoutSeconds: 300,
    });
    const url = new URL(transport.last().path, 'http://x');
    assert.equal(url.pathname, '/api/v1/pods');
    assert.equal(url.searchParams.get('watch'), 'true');
    assert.equal(url.searchParams.get('allowWatchBookmarks'), 'true');
    assert.equal(url.searchParams.get('resourceVersion'), '5');
    const body = transport.streams[0]!;
    body.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"6"}}}\n{"type":"BOOK');
    body.write('MARK","object":{"metadata":{"resourceVersion":"7"}}}\n');
    body.write(
      '{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"}}\n',
    );
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const ev of stream) seen.push(`${ev.type}:${ev.object.metadata?.resourceVersion}`);
      })(),
      (err: unknown) => isGone(err),
    );
    assert.deepEqual(seen, ['ADDED:6', 'BOOKMARK:7']);
  });

  it('watch refused by the server throws before streaming', async () => {
    const { client } = setup(() => status(403, 'Forbidden', 'no'));
    await assert.rejects(client.watch(CoreResources.pods), (e: unknown) => e instanceof ApiError && e.code === 403);
  });

  it('a closed watch ends its iteration quietly', async () => {
    const { transport, client } = setup(() => ({ status: 200 }));
    const stream = await client.watch(CoreResources.pods);
    const done = (async () => {
      let n = 0;
      for await (const _ of stream) n++;
      return n;
    })();
    transport.streams[0]!.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}\n');
    stream.close();
    assert.ok((await done) <= 1);
  });
});
