// deploy/ grants the agent what the image puller does and no more, checked by kube-apiserver itself on the real
// cluster with the kruise-daemon ServiceAccount's token: NodeImages read and their status patched (never created or
// their spec written; the status only of its node's own, which deploy/node-confinement adds), Events recorded, no
// Secret anywhere (kruise-controller answers its pull credentials), the controller's CA ConfigMap read by name.
import assert from 'node:assert/strict';
import { FAKE_NODE_IMAGE_LABEL } from '../../../src/api/constants.js';
import { NODE_IMAGES, type NodeImage } from '../../../src/api/nodeimage.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isForbidden, isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../../support/real-images.js';

const PROBE = 'e2e-rbac-probe';
const NS = 'e2e-imagepuller-rbac';

async function forbidden(request: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(request, (err: unknown) => {
    assert.ok(isForbidden(err), `${what}: ${String(err)}`);
    assert.match(String(err), /system:serviceaccount:kruise-system:kruise-daemon/);
    return true;
  });
}

describe('imagepuller RBAC of deploy/ on the real API server', function () {
  this.timeout(120_000);
  let cluster: RealCluster;
  let agent: KubeClient;

  before(async () => {
    cluster = await useRealCluster();
    agent = new KubeClient(await loadKubeconfig(cluster.agentKubeconfig), { timeoutMs: 20_000 });
    await freshNamespace(cluster.admin, NS);
    await cluster.admin.delete(NODE_IMAGES, PROBE).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    // labelled fake, so a controller never deletes it for want of a Node
    await cluster.admin.create(NODE_IMAGES, {
      metadata: { name: PROBE, labels: { [FAKE_NODE_IMAGE_LABEL]: 'true' } },
      spec: {},
    });
    await cluster.admin.create(
      CoreResources.secrets,
      { metadata: { name: 'elsewhere', namespace: NS }, data: {} },
      { namespace: NS },
    );
  });

  after(async () => {
    agent?.close();
    await cluster?.admin.delete(NODE_IMAGES, PROBE).catch(() => undefined);
    if (cluster) await removeNamespace(cluster.admin, NS);
  });

  it('lets the agent read NodeImages and patch their status, and nothing more of them', async () => {
    const list = await agent.list<NodeImage>(NODE_IMAGES, { fieldSelector: `metadata.name=${PROBE}` });
    assert.deepEqual(
      list.items.map((n) => n.metadata.name),
      [PROBE],
    );
    const probe = await agent.get<NodeImage>(NODE_IMAGES, PROBE);
    // RBAC lets it patch any NodeImage's status; deploy/node-confinement then refuses every NodeImage but its node's
    // (test/e2e/operate/node-confinement.test.ts has the allowed side)
    await assert.rejects(
      agent.patch<NodeImage>(
        NODE_IMAGES,
        PROBE,
        { status: { desired: 0, succeeded: 0, failed: 0, pulling: 0, waiting: 0 } },
        { type: 'merge', subresource: 'status' },
      ),
      (err: unknown) =>
        isForbidden(err) && /kruise-daemon-node-confinement.*which belongs to node e2e-rbac-probe/.test(String(err)),
    );
    await forbidden(
      agent.update(NODE_IMAGES, { ...probe, spec: { images: { x: { tags: [{ tag: '1' }] } } } } as KubeObject),
      'spec update',
    );
    await forbidden(agent.create(NODE_IMAGES, { metadata: { name: `${PROBE}-2` }, spec: {} } as KubeObject), 'create');
    await forbidden(agent.delete(NODE_IMAGES, PROBE), 'delete');
  });

  it('lets it record events (those of a cluster-scoped NodeImage in namespace default)', async () => {
    // kube-apiserver refuses an event whose namespace is not its object's, and "default" for a cluster-scoped one;
    // deploy/node-confinement wants it recorded as the agent on its node, about its node's own NodeImage
    const node = cluster.nodes[0]!.name;
    const event = await agent.create<KubeObject>(
      CoreResources.events,
      {
        metadata: { generateName: 'rbac-probe.', namespace: 'default' },
        involvedObject: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'NodeImage', name: node },
        reason: 'Probe',
        message: 'RBAC probe',
        type: 'Normal',
        source: { component: 'kruise-daemon-imagepuller', host: node },
        reportingComponent: 'kruise-daemon-imagepuller',
        reportingInstance: node,
      } as KubeObject,
      { namespace: 'default' },
    );
    assert.ok(event.metadata?.name?.startsWith('rbac-probe.'));
    await cluster.admin.delete(CoreResources.events, event.metadata?.name ?? '', { namespace: 'default' });
  });

  it('lets it read no secret, even in kruise-daemon-config; only the controller CA ConfigMap there, by name', async () => {
    await forbidden(agent.list(CoreResources.secrets, { namespace: 'kruise-daemon-config' }), 'listing the copies');
    await forbidden(agent.get(CoreResources.secrets, 'any', { namespace: 'kruise-daemon-config' }), 'a copy by name');
    await forbidden(agent.get(CoreResources.secrets, 'elsewhere', { namespace: NS }), 'a secret in another namespace');
    await forbidden(agent.list(CoreResources.secrets), 'secrets of every namespace');
    await forbidden(
      agent.create(
        CoreResources.secrets,
        { metadata: { name: 'x', namespace: 'kruise-daemon-config' } },
        { namespace: 'kruise-daemon-config' },
      ),
      'writing a secret',
    );
    // the CA ConfigMap: get by name is allowed (404 when no controller published it yet), nothing else
    await agent
      .get(CoreResources.configMaps, 'kruise-controller-ca', { namespace: 'kruise-daemon-config' })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    await forbidden(
      agent.list(CoreResources.configMaps, { namespace: 'kruise-daemon-config' }),
      'listing ConfigMaps there',
    );
  });
});
