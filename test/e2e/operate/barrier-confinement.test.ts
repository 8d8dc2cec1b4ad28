// Issue 26, holes 5 and 6 (launch barriers and ConfigMap reads), as the attack was made on the real API server:
// the agent of node A, holding a token bound to a pod on node A (as its DaemonSet pod's token is), against
// deploy/node-confinement (policy.yaml: what a barrier write may change; barrier-owner.yaml: the barrier's pod, looked
// up by the API server) and deploy/base's RBAC (no ConfigMap get). Each refused write is refused with the policy's
// message; the writes the agent really makes still pass.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { BARRIER_NODE_NAME_LABEL } from '../../../src/api/constants.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isForbidden, isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { serviceAccountKubeconfig, SYSTEM_NAMESPACE } from '../../cluster/k8s/system.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';
import { deniedBy, otherBarrierPolicy } from '../../support/policy-denial.js';

const NS = 'e2e-barrier-confinement';
const AGENT_POD = 'e2e-barrier-agent';
const SHAPE = "ValidatingAdmissionPolicy 'kruise-daemon-node-confinement'";
const OWNER = "ValidatingAdmissionPolicy 'kruise-daemon-barrier-owner'";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  immutable?: boolean;
}

/** A ConfigMap write refused: by `policy` with `message`, or by the other barrier policy where both refuse it. */
const denied = (request: Promise<unknown>, policy: string, message: RegExp): Promise<void> =>
  deniedBy(request, policy, message, otherBarrierPolicy(policy));

describe('launch barriers and ConfigMap reads of a stolen agent token (issue 26, holes 5 and 6)', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let nodeA: NodeLayout;
  let nodeB: NodeLayout;
  let agent: KubeClient;
  let boundFile = '';
  const uids: Record<string, string> = {};

  /** A pod on `node`; with `keys`, a launch-priority pod whose containers wait on those keys of `<name>-barrier`. */
  function pod(
    name: string,
    node: NodeLayout,
    keys: string[],
    namespace = NS,
    serviceAccountName?: string,
  ): KubeObject {
    return {
      metadata: { name, namespace },
      spec: {
        nodeName: node.name,
        ...(serviceAccountName ? { serviceAccountName, automountServiceAccountToken: false } : {}),
        terminationGracePeriodSeconds: 1,
        containers: (keys.length > 0 ? keys : ['']).map((key, i) => ({
          name: `c${i}`,
          image: cluster.vars.SANDBOX_IMAGE!,
          imagePullPolicy: 'IfNotPresent',
          ...(key && {
            env: [
              { name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: `${name}-barrier`, key } } },
            ],
          }),
        })),
      },
    } as KubeObject;
  }

  /** The barrier the agent of node A creates for pod `podName`, changed by `change`. */
  function barrier(podName: string, change: (cm: ConfigMap) => void = () => undefined): ConfigMap {
    const cm: ConfigMap = {
      metadata: {
        name: `${podName}-barrier`,
        namespace: NS,
        labels: { [BARRIER_NODE_NAME_LABEL]: nodeA.name },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: uids[podName] ?? 'no-such-uid' }],
      },
      data: { p_1: 'true' },
    };
    change(cm);
    return cm;
  }

  const create = (cm: ConfigMap): Promise<ConfigMap> =>
    agent.create<ConfigMap>(CoreResources.configMaps, cm, { namespace: NS });
  const patch = (name: string, body: unknown): Promise<ConfigMap> =>
    agent.patch<ConfigMap>(CoreResources.configMaps, name, body, { type: 'merge', namespace: NS });

  before(async () => {
    cluster = await useRealCluster();
    [nodeA, nodeB] = cluster.nodes as [NodeLayout, NodeLayout];
    await freshNamespace(cluster.admin, NS);
    await cluster.admin
      .delete(CoreResources.pods, AGENT_POD, { namespace: SYSTEM_NAMESPACE, gracePeriodSeconds: 0 })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    await cluster.admin.create(CoreResources.pods, pod(AGENT_POD, nodeA, [], SYSTEM_NAMESPACE, 'kruise-daemon'), {
      namespace: SYSTEM_NAMESPACE,
    });
    boundFile = join(cluster.layout.k8sDir, 'credentials', 'e2e-barrier-bound.kubeconfig');
    serviceAccountKubeconfig(cluster.layout, SYSTEM_NAMESPACE, 'kruise-daemon', boundFile, 1, AGENT_POD);
    agent = new KubeClient(await loadKubeconfig(boundFile), { timeoutMs: 20_000 });
    const pods: [string, NodeLayout, string[]][] = [
      ['lp-a', nodeA, ['p_1', 'p_2']],
      ['lp-a2', nodeA, ['p_1', 'p_2']],
      ['lp-b', nodeB, ['p_1', 'p_2']],
      ['plain-a', nodeA, []],
      ['user-a', nodeA, ['p_1']],
    ];
    for (const [name, node, keys] of pods) {
      const created = await cluster.admin.create(CoreResources.pods, pod(name, node, keys), { namespace: NS });
      uids[name] = created.metadata?.uid ?? '';
    }
    // the policy's parameters come from the API server's pod informer: wait until it has the pods (a write of
    // node B's pod's barrier is refused once it does)
    await waitFor(
      () =>
        create(barrier('lp-b')).then(
          () => {
            throw new Error("node B's barrier was accepted");
          },
          (err: unknown) => (String(err).includes(OWNER) ? true : undefined),
        ),
      { timeoutMs: 30_000, message: "the API server's policy sees the test's pods" },
    );
    // and sees each with the uid it was created with (a dry run of the barrier the agent would write is admitted)
    await waitFor(
      () =>
        agent.create(CoreResources.configMaps, barrier('lp-a'), { namespace: NS, dryRun: true }).then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 60_000, message: "the API server's policies admit node A's pod's own barrier" },
    );
  });

  after(async () => {
    agent?.close();
    if (boundFile) rmSync(boundFile, { force: true });
    if (!cluster) return;
    await cluster.admin
      .delete(CoreResources.pods, AGENT_POD, { namespace: SYSTEM_NAMESPACE, gracePeriodSeconds: 0 })
      .catch(() => undefined);
    await removeNamespace(cluster.admin, NS);
  });

  it('refuses at create: foreign finalizers, immutable, annotations, binaryData, other labels and values', async () => {
    const cases: [string, (cm: ConfigMap) => void, RegExp][] = [
      ['finalizer', (cm) => (cm.metadata!.finalizers = ['example.com/keep']), /finalizers are not allowed/],
      ['immutable', (cm) => (cm.immutable = true), /immutable is not allowed/],
      ['annotation', (cm) => (cm.metadata!.annotations = { a: 'b' }), /annotations are not allowed/],
      ['binaryData', (cm) => Object.assign(cm, { binaryData: { blob: 'AA==' } }), /binaryData is not allowed/],
      ['label', (cm) => (cm.metadata!.labels!.team = 'x'), /labels other than kruise-daemon.io\/node-name/],
      ['value', (cm) => (cm.data = { p_1: 'x'.repeat(1000) }), /keys must be p_<n> .* with the value "true"/],
      ['key', (cm) => (cm.data = { 'config.yaml': 'a: 1' }), /keys must be p_<n>/],
      ['long key', (cm) => (cm.data = { p_12345678901: 'true' }), /keys must be p_<n>/],
    ];
    for (const [what, change, message] of cases) {
      await denied(create(barrier('lp-a', change)), SHAPE, message).catch((err: unknown) => {
        throw new Error(`${what}: ${String(err)}`);
      });
    }
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p_${i}`, 'true']));
    await denied(create(barrier('lp-a', (cm) => (cm.data = many))), SHAPE, /at most 64 keys/);
  });

  it("refuses an owner other than the pod's real one: a fake uid, a controller owner, two owners", async () => {
    await denied(
      create(barrier('lp-a', (cm) => (cm.metadata!.ownerReferences![0]!.uid = 'a7a7a7a7-0000-0000-0000-000000000000'))),
      OWNER,
      new RegExp(`only owned by Pod lp-a with its uid ${uids['lp-a']}`),
    );
    await denied(
      create(barrier('lp-a', (cm) => (cm.metadata!.ownerReferences![0]!.controller = true))),
      SHAPE,
      /exactly one owner reference, to Pod <pod>/,
    );
    await denied(
      create(
        barrier('lp-a', (cm) =>
          cm.metadata!.ownerReferences!.push({ apiVersion: 'v1', kind: 'Pod', name: 'lp-a2', uid: uids['lp-a2']! }),
        ),
      ),
      SHAPE,
      /exactly one owner reference/,
    );
  });

  it("refuses a barrier of node B's pod, of a pod that waits on none, and keys the pod does not wait on", async () => {
    await denied(
      create(barrier('lp-b')),
      OWNER,
      new RegExp(
        `kruise-daemon of node ${nodeA.name} may not write configmaps ${NS}/lp-b-barrier: Pod lp-b runs on node ${nodeB.name}`,
      ),
    );
    await denied(create(barrier('plain-a')), OWNER, /only with keys Pod plain-a waits on \(none\)/);
    await denied(
      create(barrier('lp-a', (cm) => (cm.data = { p_7: 'true' }))),
      OWNER,
      /only with keys Pod lp-a waits on \(p_1, p_2\)/,
    );
  });

  it('allows the writes the agent makes: create, add a key, look through a patch of its label; nothing else after', async () => {
    const created = await create(barrier('lp-a'));
    assert.deepEqual(created.data, { p_1: 'true' });
    const added = await patch('lp-a-barrier', {
      metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: nodeA.name } },
      data: { p_2: 'true' },
    });
    assert.deepEqual(added.data, { p_1: 'true', p_2: 'true' });
    const seen = await patch('lp-a-barrier', { metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: nodeA.name } } });
    assert.deepEqual(seen.data, { p_1: 'true', p_2: 'true' });
    // and then: no key removed or changed, no owner, finalizer, annotation or immutable added
    await denied(patch('lp-a-barrier', { data: { p_1: null } }), SHAPE, /no key may be removed or changed/);
    await denied(patch('lp-a-barrier', { data: { p_1: 'false' } }), SHAPE, /no key may be removed or changed/);
    await denied(
      patch('lp-a-barrier', {
        metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'lp-a', uid: 'fake' }] },
      }),
      SHAPE,
      /ownerReferences may not change/,
    );
    await denied(
      patch('lp-a-barrier', { metadata: { finalizers: ['example.com/keep'] } }),
      SHAPE,
      /finalizers may not change/,
    );
    await denied(patch('lp-a-barrier', { metadata: { annotations: { a: 'b' } } }), SHAPE, /annotations may not change/);
    await denied(patch('lp-a-barrier', { immutable: true }), SHAPE, /immutable may not change/);
    await denied(patch('lp-a-barrier', { data: { p_3: 'true' } }), OWNER, /only with keys Pod lp-a waits on/);
  });

  it("leaves a user's barrier's other keys (config.yaml) alone: only keys p_<n> of its pod are added", async () => {
    await cluster.admin.create(
      CoreResources.configMaps,
      { metadata: { name: 'user-a-barrier', namespace: NS }, data: { 'config.yaml': 'a: 1\n' } },
      { namespace: NS },
    );
    await denied(patch('user-a-barrier', { data: { 'config.yaml': null } }), SHAPE, /no key may be removed or changed/);
    await denied(patch('user-a-barrier', { data: { 'config.yaml': 'b: 2\n' } }), SHAPE, /no key may be removed/);
    const taken = await patch('user-a-barrier', {
      metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: nodeA.name } },
      data: { p_1: 'true' },
    });
    assert.deepEqual(taken.data, { 'config.yaml': 'a: 1\n', p_1: 'true' });
  });

  it('cannot keep a barrier of a pod that does not exist: the garbage collector removes it', async () => {
    // no pod to check it against: the shape passes; its owner being absent, the collector deletes it
    await create(barrier('ghost'));
    await waitFor(
      () =>
        cluster.admin.get(CoreResources.configMaps, 'ghost-barrier', { namespace: NS }).then(
          () => undefined,
          (err: unknown) => {
            if (isNotFound(err)) return true;
            throw err;
          },
        ),
      { timeoutMs: 60_000, intervalMs: 500, message: 'ghost-barrier removed by the garbage collector' },
    );
  });

  it("cannot read a ConfigMap: no get (a tenant's db-password, kube-system's extension-apiserver-authentication)", async () => {
    await cluster.admin.create(
      CoreResources.configMaps,
      { metadata: { name: 'db-password', namespace: NS }, data: { password: 'hunter2' } },
      { namespace: NS },
    );
    for (const [namespace, name] of [
      [NS, 'db-password'],
      ['kube-system', 'extension-apiserver-authentication'],
      [NS, 'lp-a-barrier'],
    ] as const) {
      await assert.rejects(agent.get(CoreResources.configMaps, name, { namespace }), (err: unknown) => {
        assert.ok(isForbidden(err), String(err));
        assert.match(String(err), /cannot get resource "configmaps"/);
        return true;
      });
    }
    // nor through a write that answers with the object (how the agent looks at its barriers)
    await denied(patch('db-password', {}), SHAPE, /it is no launch barrier/);
    await denied(
      patch('db-password', { metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: nodeA.name } } }),
      SHAPE,
      /it is no launch barrier/,
    );
  });
});
