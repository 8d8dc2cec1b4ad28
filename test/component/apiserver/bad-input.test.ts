// emulator: the subject under test (the emulator's own component tests)
// Bad input never crashes the emulator: every malformed request gets a 4xx Status naming the problem.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startApiServer, type ApiServer } from '../../cluster/apiserver/index.js';
import { widgetCrd, WIDGETS } from './fixtures.js';
import { RawClient } from './http-client.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('API emulator: bad input', () => {
  let server: ApiServer;
  let api: RawClient;

  before(async () => {
    server = await startApiServer();
    api = new RawClient(server.url);
    await api.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
  });
  after(async () => server?.close());

  function assertClientError(reply: { status: number; body: any }, what: string): void {
    assert.ok(
      reply.status >= 400 && reply.status < 500,
      `${what}: expected 4xx, got ${reply.status} ${JSON.stringify(reply.body)}`,
    );
    assert.equal(reply.body?.kind, 'Status', what);
    assert.equal(typeof reply.body.message, 'string', what);
  }

  it('answers malformed bodies, paths and parameters with 4xx Status objects', async () => {
    const cases: [string, string, unknown, Record<string, string>?][] = [
      ['POST', CMS, '{not json'],
      ['POST', CMS, '[1,2]'],
      ['POST', CMS, '"text"'],
      ['POST', CMS, { metadata: 'x' }],
      ['POST', CMS, { metadata: { name: 7 } }],
      ['POST', CMS, { metadata: { name: 'a', labels: { k: 1 } } }],
      ['POST', CMS, { metadata: { name: 'a', finalizers: 'x' } }],
      ['POST', CMS, { metadata: { name: 'a', ownerReferences: [{}] } }],
      ['POST', CMS, { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'a' } }],
      ['POST', CMS, { kind: 'Secret', metadata: { name: 'a' } }],
      ['POST', CMS, { metadata: { name: 'a' }, data: { k: 1 } }],
      ['POST', CMS, '', { 'content-type': 'application/json' }],
      ['POST', CMS, 'a: b', { 'content-type': 'text/plain' }],
      ['POST', '/api/v1/nodes', { metadata: { name: 'x', namespace: 'default' }, spec: 'nope' }],
      ['POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: 'x' } }],
      ['POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: [] }],
      ['POST', WIDGETS, { metadata: { name: 'w' }, spec: 'x' }],
      ['POST', WIDGETS, { metadata: { name: 'w' }, spec: { image: 5, size: 'big' } }],
      ['PATCH', `${CMS}/missing`, '{}', { 'content-type': 'application/merge-patch+json' }],
      ['PATCH', `${CMS}/missing`, '{}', { 'content-type': 'application/x-unknown' }],
      ['GET', `${CMS}?labelSelector=a%20in%20(`, undefined],
      ['GET', `${CMS}?fieldSelector=nope`, undefined],
      ['GET', `${CMS}?limit=-1`, undefined],
      ['GET', `${CMS}?continue=garbage`, undefined],
      ['GET', `${CMS}?watch=maybe`, undefined],
      ['GET', `${CMS}?watch=true&resourceVersion=abc`, undefined],
      ['GET', '/api/v1/nosuchthings', undefined],
      ['GET', '/apis/no.such.group/v1/things', undefined],
      ['GET', '/openapi/v2', undefined],
      ['DELETE', `${CMS}/missing`, { propagationPolicy: 'Sometimes' }],
      ['DELETE', `${CMS}/missing?gracePeriodSeconds=soon`, undefined],
      ['PUT', '/version', '{}'],
      ['POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { metadata: { name: 'x' }, spec: {} }],
      ['POST', `${CMS}?dryRun=Some`, { metadata: { name: 'a' } }],
      ['POST', `${CMS}?fieldValidation=Loose`, { metadata: { name: 'a' } }],
    ];
    for (const [method, path, body, headers] of cases) {
      const reply = await api.request(method, path, body, headers);
      assertClientError(reply, `${method} ${path} ${JSON.stringify(body)}`);
    }
    assert.equal((await api.get('/readyz')).status, 200);
  });

  it('answers broken protobuf bodies with 400 and other protobuf kinds with 415', async () => {
    const send = (bytes: number[]) =>
      fetch(server.url + CMS, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
        body: Buffer.from(bytes),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    assertClientError(await send([1, 2, 3]), 'no magic');
    const broken = await send([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x50, 0x01]);
    assert.equal(broken.status, 400);
    assert.match(broken.body.message, /truncated/);
    // TypeMeta {apiVersion: "apps/v1", kind: "Deployment"}, no raw.
    const typeMeta = [0x0a, 7, ...Buffer.from('apps/v1'), 0x12, 10, ...Buffer.from('Deployment')];
    const other = await send([0x6b, 0x38, 0x73, 0x00, 0x0a, typeMeta.length, ...typeMeta]);
    assert.equal(other.status, 415);
    assert.match(
      other.body.message,
      /only for v1 ConfigMap, Secret, Namespace, ServiceAccount; got apps\/v1 Deployment/,
    );
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const big = { metadata: { name: 'big' }, data: { k: 'x'.repeat(3 * 1024 * 1024 + 10) } };
    const reply = await api.post(CMS, big);
    assert.equal(reply.status, 413);
  });

  it('answers any JSON body with 201 or a 4xx Status, never 5xx (property)', async () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const body = fc.oneof(
      json,
      fc.record({
        metadata: fc.oneof(json, fc.record({ name: fc.oneof(fc.string(), json), labels: json })),
        data: json,
      }),
      fc.record({ metadata: fc.record({ generateName: fc.constant('p-') }), spec: json, status: json }),
    );
    const paths = fc.constantFrom(
      CMS,
      WIDGETS,
      '/api/v1/namespaces/default/pods',
      '/api/v1/namespaces/default/secrets',
    );
    await fc.assert(
      fc.asyncProperty(paths, body, async (path, value) => {
        const reply = await api.post(path, value);
        if (reply.status === 201) return;
        assertClientError(reply, `${path} ${JSON.stringify(value).slice(0, 200)}`);
      }),
      { numRuns: 300 },
    );
  });

  it('answers any patch or update of existing objects with 200 or a 4xx Status, never 5xx (property)', async () => {
    await api.create(CMS, { metadata: { name: 'target' }, data: { k: 'v' } });
    await api.create(WIDGETS, { metadata: { name: 'target' }, spec: { image: 'x' } });
    await api.create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'target' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const targets = fc.constantFrom(`${CMS}/target`, `${WIDGETS}/target`, '/api/v1/namespaces/default/pods/target');
    const kinds = fc.constantFrom('merge', 'json', 'strategic-merge', 'put', 'status');
    await fc.assert(
      fc.asyncProperty(targets, kinds, fc.jsonValue({ maxDepth: 4 }), async (path, kind, value) => {
        const reply =
          kind === 'put'
            ? await api.put(path, value)
            : kind === 'status'
              ? await api.patch(`${path}/status`, value)
              : await api.patch(path, value, kind);
        if (reply.status === 200) return;
        assertClientError(reply, `${kind} ${path} ${JSON.stringify(value).slice(0, 200)}`);
      }),
      { numRuns: 300 },
    );
    assert.equal((await api.get(`${CMS}/target`)).status, 200);
  });
});
