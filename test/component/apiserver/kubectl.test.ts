// emulator: the subject under test (the emulator's own component tests)
// The real kubectl 1.32 against the emulator: apply/create with strict validation, get (tables, yaml, selectors),
// patch (merge, json, status), delete, watch, schema errors, apply twice (strategic merge for built-ins, merge
// patch for custom resources).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';
import { startApiServer, type ApiServer } from '../../cluster/apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { FIXTURES } from './fixtures.js';
import { Kubectl } from './kubectl.js';

const crdFile = join(FIXTURES, 'widgets-crd.yaml');
const widgetFile = join(FIXTURES, 'widget-a.yaml');
const configMapFile = join(FIXTURES, 'configmap-demo.yaml');

describe('kubectl against the API emulator', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let kubectl: Kubectl;

  before(async () => {
    server = await startApiServer();
    kubectl = await Kubectl.forServer(server.url);
    await kubectl.ok(['apply', '-f', crdFile]);
  });
  after(async () => {
    await server?.close();
    await kubectl?.cleanup();
  });

  it('applies a CRD and serves its kind with printer columns', async () => {
    assert.match(await kubectl.ok(['get', 'crd']), /widgets\.test\.kruise\.io/);
    const out = await kubectl.ok(['apply', '-f', widgetFile]);
    assert.equal(out.trim(), 'widget.test.kruise.io/widget-a created');
    const table = await kubectl.ok(['get', 'widgets']);
    assert.match(table, /^NAME\s+SIZE\s+COLOR\s+PHASE\s+AGE\n/);
    assert.match(table, /widget-a\s+1\s+red\s+\d+s/);
  });

  it('applies a custom resource twice: unchanged, then configured through a merge patch', async () => {
    await kubectl.ok(['apply', '-f', widgetFile]);
    assert.equal((await kubectl.ok(['apply', '-f', widgetFile])).trim(), 'widget.test.kruise.io/widget-a unchanged');
    const changed = (await import('node:fs')).readFileSync(widgetFile, 'utf8').replace('color: red', 'color: green');
    assert.equal((await kubectl.ok(['apply', '-f', '-'], changed)).trim(), 'widget.test.kruise.io/widget-a configured');
    assert.equal(await kubectl.ok(['get', 'wd', 'widget-a', '-o', 'jsonpath={.spec.color}']), 'green');
    assert.ok(
      server.requestCount({
        method: 'PATCH',
        pathPrefix: '/apis/test.kruise.io/v1/namespaces/default/widgets/widget-a',
      }) >= 1,
    );
  });

  it('applies a ConfigMap twice (strategic merge patch) and removes a dropped key', async () => {
    assert.match(await kubectl.ok(['apply', '-f', configMapFile]), /configmap\/demo-config (created|unchanged)/);
    assert.equal((await kubectl.ok(['apply', '-f', configMapFile])).trim(), 'configmap/demo-config unchanged');
    const fewer = (await import('node:fs')).readFileSync(configMapFile, 'utf8').replace(/\s+key2: value2/, '');
    assert.equal((await kubectl.ok(['apply', '-f', '-'], fewer)).trim(), 'configmap/demo-config configured');
    const data = JSON.parse(await kubectl.ok(['get', 'cm', 'demo-config', '-o', 'jsonpath={.data}']));
    assert.deepEqual(data, { key1: 'value1' });
  });

  it('server-side applies (create, then merge into the live object)', async () => {
    const manifest = (value: string): string =>
      ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: ssa-cm', 'data:', `  k: "${value}"`].join('\n');
    assert.equal(
      (await kubectl.ok(['apply', '--server-side', '-f', '-'], manifest('1'))).trim(),
      'configmap/ssa-cm serverside-applied',
    );
    await kubectl.ok(['label', 'cm', 'ssa-cm', 'extra=kept']);
    await kubectl.ok(['apply', '--server-side', '-f', '-'], manifest('2'));
    const got = JSON.parse(await kubectl.ok(['get', 'cm', 'ssa-cm', '-o', 'json']));
    assert.equal(got.data.k, '2');
    assert.equal(got.metadata.labels.extra, 'kept');
  });

  it('creates from a file and prints objects as YAML', async () => {
    const manifest = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: created-cm',
      '  labels: {tier: back}',
      'data: {a: "1"}',
    ].join('\n');
    assert.equal((await kubectl.ok(['create', '-f', '-'], manifest)).trim(), 'configmap/created-cm created');
    const yaml = await kubectl.ok(['get', 'cm', 'created-cm', '-o', 'yaml']);
    assert.match(yaml, /^apiVersion: v1\n/);
    assert.match(yaml, /resourceVersion: "\d+"/);
    assert.match(yaml, /uid: [0-9a-f-]{36}/);
    const again = await kubectl.run(['create', '-f', '-'], manifest);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /Error from server \(AlreadyExists\).*configmaps "created-cm" already exists/);
  });

  it('lists with -l and --field-selector', async () => {
    await kubectl.ok(['apply', '-f', '-'], widgetManifest('sel-a', 'blue', 'gx'));
    await kubectl.ok(['apply', '-f', '-'], widgetManifest('sel-b', 'red', 'gy'));
    assert.equal(
      (await kubectl.ok(['get', 'wd', '-l', 'group=gx', '-o', 'name'])).trim(),
      'widget.test.kruise.io/sel-a',
    );
    const byColor = await kubectl.ok(['get', 'wd', '--field-selector', 'spec.color=red', '-o', 'name']);
    assert.ok(byColor.includes('widget.test.kruise.io/sel-b'));
    assert.ok(!byColor.includes('sel-a'));
    const notIn = await kubectl.ok(['get', 'wd', '-l', 'group notin (gx)', '-o', 'name']);
    assert.ok(notIn.includes('sel-b') && !notIn.includes('sel-a'));
    const badField = await kubectl.run(['get', 'wd', '--field-selector', 'spec.image=x']);
    assert.equal(badField.code, 1);
    assert.match(badField.stderr, /field label not supported: spec.image/);
  });

  it('patches with --type merge, --type json and --subresource=status', async () => {
    await kubectl.ok(['apply', '-f', '-'], widgetManifest('patched', 'red', 'gp'));
    assert.equal(
      (await kubectl.ok(['patch', 'wd', 'patched', '--type', 'merge', '-p', '{"spec":{"size":4}}'])).trim(),
      'widget.test.kruise.io/patched patched',
    );
    assert.equal(
      (await kubectl.ok(['patch', 'wd', 'patched', '--type', 'merge', '-p', '{"spec":{"size":4}}'])).trim(),
      'widget.test.kruise.io/patched patched (no change)',
    );
    await kubectl.ok([
      'patch',
      'wd',
      'patched',
      '--type',
      'json',
      '-p',
      '[{"op":"replace","path":"/spec/color","value":"blue"}]',
    ]);
    await kubectl.ok([
      'patch',
      'wd',
      'patched',
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      '{"status":{"phase":"Ready"}}',
    ]);
    const got = JSON.parse(await kubectl.ok(['get', 'wd', 'patched', '-o', 'json']));
    assert.equal(got.spec.size, 4);
    assert.equal(got.spec.color, 'blue');
    assert.equal(got.status.phase, 'Ready');
    assert.equal(got.metadata.generation, 3);
    const smp = await kubectl.run(['patch', 'wd', 'patched', '-p', '{"spec":{"size":5}}']);
    assert.equal(smp.code, 1);
    assert.match(smp.stderr, /application\/strategic-merge-patch\+json is not supported/);
  });

  it('rejects an object that violates its CRD schema, naming the fields', async () => {
    const r = await kubectl.run(
      ['apply', '-f', '-'],
      widgetManifest('bad', 'pink', 'gb').replace('size: 1', 'size: 42'),
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /The Widget "bad" is invalid/);
    assert.match(r.stderr, /spec\.color: Unsupported value: "pink": supported values: "red", "green", "blue"/);
    assert.match(r.stderr, /spec\.size: Invalid value: 42/);
  });

  it('watches with --output-watch-events: added, modified, deleted', async () => {
    const watcher = kubectl.spawn(['get', 'wd', '-w', '--output-watch-events']);
    try {
      await waitFor(() => /EVENT\s+NAME/.test(watcher.output()) || server.openWatches() > 0, {
        message: 'kubectl watching',
      });
      await waitFor(() => server.openWatches() > 0, { message: 'the watch request' });
      await kubectl.ok(['apply', '-f', '-'], widgetManifest('watched', 'red', 'gw'));
      await kubectl.ok(['patch', 'wd', 'watched', '--type', 'merge', '-p', '{"spec":{"size":7}}']);
      await kubectl.ok(['delete', 'wd', 'watched']);
      await waitFor(() => /DELETED\s+watched/.test(watcher.output()), {
        message: 'DELETED printed',
        timeoutMs: 20_000,
      });
      const out = watcher.output();
      assert.match(out, /ADDED\s+watched\s+1\s+red/);
      assert.match(out, /MODIFIED\s+watched\s+7\s+red/);
    } finally {
      watcher.child.kill('SIGTERM');
    }
  });

  it('deletes and reports NotFound afterwards', async () => {
    await kubectl.ok(['apply', '-f', '-'], widgetManifest('gone', 'red', 'gg'));
    assert.equal((await kubectl.ok(['delete', 'wd', 'gone'])).trim(), 'widget.test.kruise.io "gone" deleted');
    const r = await kubectl.run(['get', 'wd', 'gone']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error from server \(NotFound\): widgets.test.kruise.io "gone" not found/);
  });

  it('prints node and pod tables', async () => {
    await kubectl.ok(['apply', '-f', '-'], nodeManifest('table-node'));
    await kubectl.ok(['apply', '-f', '-'], namespaceManifest('ns-a'));
    await kubectl.ok(['apply', '-f', '-'], podManifest('p1', 'ns-a', 'table-node'));
    await kubectl.ok(['apply', '-f', '-'], podManifest('p2', 'default', 'table-node'));
    const nodes = await kubectl.ok(['get', 'nodes']);
    assert.match(nodes, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\n/);
    assert.match(nodes, /table-node\s+Ready\s+<none>\s+\S+\s+v1\.32\.0/);
    const pods = await kubectl.ok(['get', 'pods', '-A']);
    assert.match(pods, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    assert.match(pods, /ns-a\s+p1\s+0\/1\s+Pending\s+0\s+/);
    assert.match(pods, /default\s+p2\s+0\/1\s+Pending\s+0\s+/);
    const wide = await kubectl.ok(['get', 'pods', '-n', 'ns-a', '-o', 'wide']);
    assert.match(wide, /p1\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+table-node/);
    const onNode = await kubectl.ok([
      'get',
      'pods',
      '-A',
      '--field-selector',
      'spec.nodeName=table-node',
      '-o',
      'name',
    ]);
    assert.deepEqual(onNode.trim().split('\n').sort(), ['pod/p1', 'pod/p2']);
  });

  it('takes the protobuf bodies of kubectl create namespace/configmap/secret/serviceaccount', async () => {
    assert.equal((await kubectl.ok(['create', 'namespace', 'pb'])).trim(), 'namespace/pb created');
    await kubectl.ok(['create', 'configmap', 'pb-cm', '-n', 'pb', '--from-literal=a=1', '--from-literal=b=two']);
    await kubectl.ok([
      'create',
      'secret',
      'docker-registry',
      'pb-reg',
      '-n',
      'pb',
      '--docker-server=127.0.0.1:5000',
      '--docker-username=u',
      '--docker-password=p',
    ]);
    await kubectl.ok(['create', 'secret', 'generic', 'pb-gen', '-n', 'pb', '--from-literal=x=y']);
    await kubectl.ok(['create', 'serviceaccount', 'pb-sa', '-n', 'pb']);
    const cm = JSON.parse(await kubectl.ok(['get', 'cm', 'pb-cm', '-n', 'pb', '-o', 'json']));
    assert.deepEqual(cm.data, { a: '1', b: 'two' });
    const reg = JSON.parse(await kubectl.ok(['get', 'secret', 'pb-reg', '-n', 'pb', '-o', 'json']));
    assert.equal(reg.type, 'kubernetes.io/dockerconfigjson');
    const auths = JSON.parse(Buffer.from(reg.data['.dockerconfigjson'], 'base64').toString()).auths;
    assert.equal(auths['127.0.0.1:5000'].username, 'u');
    const gen = JSON.parse(await kubectl.ok(['get', 'secret', 'pb-gen', '-n', 'pb', '-o', 'json']));
    assert.equal(gen.type, 'Opaque');
    assert.equal(Buffer.from(gen.data.x, 'base64').toString(), 'y');
    const ns = JSON.parse(await kubectl.ok(['get', 'ns', 'pb', '-o', 'json']));
    assert.equal(ns.metadata.generateName, undefined);
    assert.equal(ns.status.phase, 'Active');
    const deploy = await kubectl.run(['create', 'deployment', 'pb-d', '--image=busybox', '-n', 'pb']);
    assert.equal(deploy.code, 1);
    assert.match(
      deploy.stderr,
      /decodes application\/vnd\.kubernetes\.protobuf only for v1 ConfigMap, Secret, Namespace, ServiceAccount/,
    );
  });

  it('serves the OpenKruise NodeImage CRD from deploy/crds when present', async function () {
    const file = join(packageRoot(), 'deploy', 'crds', 'apps.kruise.io_nodeimages.yaml');
    if (!existsSync(file)) this.skip();
    await kubectl.ok(['apply', '-f', file]);
    await kubectl.ok(
      ['apply', '-f', '-'],
      ['apiVersion: apps.kruise.io/v1beta1', 'kind: NodeImage', 'metadata:', '  name: kd-node-1', 'spec: {}'].join(
        '\n',
      ),
    );
    await kubectl.ok([
      'patch',
      'nodeimage',
      'kd-node-1',
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      '{"status":{"desired":1}}',
    ]);
    const got = JSON.parse(await kubectl.ok(['get', 'nodeimage', 'kd-node-1', '-o', 'json']));
    assert.equal(got.status.desired, 1);
  });
});

function widgetManifest(name: string, color: string, group: string): string {
  return [
    'apiVersion: test.kruise.io/v1',
    'kind: Widget',
    'metadata:',
    `  name: ${name}`,
    `  labels: {group: "${group}"}`,
    'spec:',
    '  image: busybox',
    '  size: 1',
    `  color: ${color}`,
  ].join('\n');
}

function namespaceManifest(name: string): string {
  return ['apiVersion: v1', 'kind: Namespace', 'metadata:', `  name: ${name}`].join('\n');
}

function nodeManifest(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      nodeInfo: { kubeletVersion: 'v1.32.0' },
    },
  });
}

function podManifest(name: string, namespace: string, node: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox' }] },
  });
}
