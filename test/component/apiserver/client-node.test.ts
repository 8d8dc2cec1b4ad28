// emulator: the subject under test (the emulator's own component tests)
// @kubernetes/client-node (used whole by the controller) against the emulator: a smoke test per API family.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { startApiServer, writeKubeconfig, type ApiServer } from '../../cluster/apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { widgetCrd } from './fixtures.js';
import { RawClient } from './http-client.js';

describe('@kubernetes/client-node against the API emulator', () => {
  let server: ApiServer;
  let dir: string;
  let kc: k8s.KubeConfig;

  before(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 200 });
    dir = await mkdtemp(join(tmpdir(), 'client-node-emu-'));
    await writeKubeconfig(join(dir, 'kubeconfig'), server.url);
    kc = new k8s.KubeConfig();
    kc.loadFromFile(join(dir, 'kubeconfig'));
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the written kubeconfig', () => {
    assert.equal(kc.getCurrentCluster()?.server, server.url);
  });

  it('CoreV1Api: create, list, patch (merge and strategic), errors as ApiException', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cn', labels: { app: 'cn' } }, data: { a: '1' } },
    });
    const list = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: 'app=cn' });
    assert.deepEqual(
      list.items.map((i) => i.metadata?.name),
      ['cn'],
    );
    assert.ok(list.metadata?.resourceVersion);
    const merged = await core.patchNamespacedConfigMap(
      { name: 'cn', namespace: 'default', body: { data: { b: '2' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.data, { a: '1', b: '2' });
    const strategic = await core.patchNamespacedConfigMap(
      { name: 'cn', namespace: 'default', body: { data: { a: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    assert.deepEqual(strategic.data, { b: '2' });
    await assert.rejects(
      core.readNamespacedConfigMap({ name: 'missing', namespace: 'default' }),
      (err: unknown) => err instanceof k8s.ApiException && err.code === 404,
    );
    const node = await core.createNode({ body: { metadata: { name: 'cn-node' } } });
    assert.equal(node.kind, 'Node');
  });

  it('CustomObjectsApi: create, get, list, patch status', async () => {
    // The CRD goes in raw: client-node's typed serializer would drop `default` and x-kubernetes-* schema keys
    // of a plain object (it expects its own property names, e.g. _default).
    await new RawClient(server.url).create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    const crd = await ext.readCustomResourceDefinition({ name: 'widgets.test.kruise.io' });
    assert.equal(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, 'True');
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const ref = { group: 'test.kruise.io', version: 'v1', namespace: 'default', plural: 'widgets' };
    await custom.createNamespacedCustomObject({
      ...ref,
      body: { apiVersion: 'test.kruise.io/v1', kind: 'Widget', metadata: { name: 'cw' }, spec: { image: 'x' } },
    });
    const got = await custom.getNamespacedCustomObject({ ...ref, name: 'cw' });
    assert.equal(got.spec.size, 1);
    const patched = await custom.patchNamespacedCustomObjectStatus(
      { ...ref, name: 'cw', body: { status: { phase: 'Ready' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.equal(patched.status.phase, 'Ready');
    const list = await custom.listNamespacedCustomObject(ref);
    assert.equal(list.kind, 'WidgetList');
    assert.equal(list.items.length, 1);
  });

  it('Watch: events with bookmarks, and a done callback when the server closes the stream', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    const events: [string, string | undefined][] = [];
    let doneCalled = false;
    const watch = new k8s.Watch(kc);
    const controller = await watch.watch(
      '/api/v1/namespaces/default/configmaps',
      { resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true },
      (type: string, obj: k8s.V1ConfigMap) => events.push([type, obj.metadata?.name]),
      () => (doneCalled = true),
    );
    try {
      await waitFor(() => server.openWatches() > 0);
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w1' } } });
      await core.deleteNamespacedConfigMap({ name: 'w1', namespace: 'default' });
      await waitFor(() => events.some(([t]) => t === 'DELETED'), { message: 'DELETED event' });
      await waitFor(() => events.some(([t]) => t === 'BOOKMARK'), { message: 'a bookmark' });
      assert.deepEqual(
        events.filter(([t]) => t !== 'BOOKMARK'),
        [
          ['ADDED', 'w1'],
          ['DELETED', 'w1'],
        ],
      );
      server.faults.closeAllWatches();
      await waitFor(() => doneCalled, { message: 'done callback' });
    } finally {
      controller.abort();
    }
  });
});
