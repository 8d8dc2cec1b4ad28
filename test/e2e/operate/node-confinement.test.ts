// deploy/node-confinement on the real API server: the agent of node A, holding a token bound to a pod on node A (as
// its DaemonSet pod's token is), may write the pods, CRRs, NodeImage, NodePodProbe and launch barriers of node A and
// none of node B's; it can neither move an object to its node nor write with a token that names no node. Plus least
// privilege of both ServiceAccounts as `kubectl auth can-i --as` sees it.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  BARRIER_NODE_NAME_LABEL,
  CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION,
  CRR_NODE_NAME_LABEL,
} from '../../../src/api/constants.js';
import { CONTAINER_RECREATE_REQUESTS } from '../../../src/api/containerrecreaterequest.js';
import { NODE_IMAGES } from '../../../src/api/nodeimage.js';
import { NODE_POD_PROBES } from '../../../src/api/nodepodprobe.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isForbidden, isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { kubectl, serviceAccountKubeconfig, SYSTEM_NAMESPACE } from '../../cluster/k8s/system.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { SELF_SUBJECT_REVIEWS, type SelfSubjectReview } from '../../support/kube-resources.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../../support/real-images.js';
import { deniedBy, NODE_CONFINEMENT_POLICY, otherBarrierPolicy } from '../../support/policy-denial.js';
import { waitFor } from '../../support/wait.js';

const NS = 'e2e-node-confinement';
const AGENT_POD = 'e2e-confinement-agent';
const AGENT_USER = 'system:serviceaccount:kruise-system:kruise-daemon';
const POLICY = "ValidatingAdmissionPolicy 'kruise-daemon-node-confinement'";

async function denied(request: Promise<unknown>, message: RegExp): Promise<void> {
  // a launch barrier's write may be refused by the barrier-owner policy as well, and named by it
  await deniedBy(request, POLICY, message, otherBarrierPolicy(NODE_CONFINEMENT_POLICY));
}

describe('node confinement of the agent (deploy/node-confinement) on the real API server', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let nodeA: NodeLayout;
  let nodeB: NodeLayout;
  let agent: KubeClient;
  let unbound: KubeClient;
  const files: string[] = [];
  const createdNodeImages: string[] = [];
  const createdNodePodProbes: string[] = [];
  const uids: Record<string, string> = {};

  function pod(name: string, node: NodeLayout, namespace = NS, serviceAccountName?: string): KubeObject {
    return {
      metadata: { name, namespace },
      spec: {
        nodeName: node.name,
        ...(serviceAccountName ? { serviceAccountName, automountServiceAccountToken: false } : {}),
        terminationGracePeriodSeconds: 1,
        // a launch-priority pod (deploy/node-confinement/barrier-owner.yaml: an agent writes only keys a pod of its
        // node waits on), two containers waiting on p_1 and p_2; the agent's own pod waits on none
        containers: (serviceAccountName ? [''] : ['p_1', 'p_2']).map((key, i) => ({
          name: i === 0 ? 'c' : 'd',
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

  function crr(name: string, node: NodeLayout): KubeObject {
    return {
      metadata: { name, namespace: NS, labels: { [CRR_NODE_NAME_LABEL]: node.name } },
      spec: { podName: `pod-${node.name}`, containers: [{ name: 'c' }] },
    } as KubeObject;
  }

  function barrier(podName: string, node: NodeLayout, keys: Record<string, string> = { p_1: 'true' }): KubeObject {
    return {
      metadata: {
        name: `${podName}-barrier`,
        namespace: NS,
        labels: { [BARRIER_NODE_NAME_LABEL]: node.name },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: uids[podName]! }],
      },
      data: keys,
    } as KubeObject;
  }

  before(async () => {
    cluster = await useRealCluster();
    [nodeA, nodeB] = cluster.nodes as [NodeLayout, NodeLayout];
    await freshNamespace(cluster.admin, NS);
    // the pod whose token the "agent of node A" holds: a pod of the kruise-daemon ServiceAccount on node A
    await cluster.admin
      .delete(CoreResources.pods, AGENT_POD, { namespace: SYSTEM_NAMESPACE, gracePeriodSeconds: 0 })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    await cluster.admin.create(CoreResources.pods, pod(AGENT_POD, nodeA, SYSTEM_NAMESPACE, 'kruise-daemon'), {
      namespace: SYSTEM_NAMESPACE,
    });
    const credentials = join(cluster.layout.k8sDir, 'credentials');
    const boundFile = join(credentials, 'e2e-confinement-bound.kubeconfig');
    const unboundFile = join(credentials, 'e2e-confinement-unbound.kubeconfig');
    files.push(boundFile, unboundFile);
    serviceAccountKubeconfig(cluster.layout, SYSTEM_NAMESPACE, 'kruise-daemon', boundFile, 1, AGENT_POD);
    serviceAccountKubeconfig(cluster.layout, SYSTEM_NAMESPACE, 'kruise-daemon', unboundFile, 1);
    agent = new KubeClient(await loadKubeconfig(boundFile), { timeoutMs: 20_000 });
    unbound = new KubeClient(await loadKubeconfig(unboundFile), { timeoutMs: 20_000 });

    for (const node of [nodeA, nodeB]) {
      const created = await cluster.admin.create(CoreResources.pods, pod(`pod-${node.name}`, node), { namespace: NS });
      uids[`pod-${node.name}`] = created.metadata?.uid ?? '';
      await cluster.admin.create(CONTAINER_RECREATE_REQUESTS, crr(`crr-${node.name}`, node), { namespace: NS });
      // the node's NodeImage, unless a controller made it already (then it is the controller's, and left there)
      await cluster.admin.create(NODE_IMAGES, { metadata: { name: node.name }, spec: {} }).then(
        () => createdNodeImages.push(node.name),
        (err: unknown) => {
          if (!String(err).includes('already exists')) throw err;
        },
      );
      await cluster.admin.create(NODE_POD_PROBES, { metadata: { name: node.name }, spec: {} }).then(
        () => createdNodePodProbes.push(node.name),
        (err: unknown) => {
          if (!String(err).includes('already exists')) throw err;
        },
      );
    }
    await cluster.admin.create(CoreResources.configMaps, barrier(`pod-${nodeB.name}`, nodeB), { namespace: NS });
    // the barrier policy's parameters come from the API server's pod cache: wait until it admits node A's pod's own
    // barrier (a dry run), so the tests below see the pods as they were created
    await waitFor(
      () =>
        agent
          .create(CoreResources.configMaps, barrier(`pod-${nodeA.name}`, nodeA), { namespace: NS, dryRun: true })
          .then(
            () => true,
            () => undefined,
          ),
      { timeoutMs: 60_000, message: "the API server's policies admit node A's pod's own barrier" },
    );
  });

  after(async () => {
    agent?.close();
    unbound?.close();
    for (const file of files) rmSync(file, { force: true });
    if (!cluster) return;
    for (const name of createdNodeImages) await cluster.admin.delete(NODE_IMAGES, name).catch(() => undefined);
    for (const name of createdNodePodProbes) {
      await cluster.admin.delete(NODE_POD_PROBES, name).catch(() => undefined);
    }
    await cluster.admin
      .delete(CoreResources.pods, AGENT_POD, { namespace: SYSTEM_NAMESPACE, gracePeriodSeconds: 0 })
      .catch(() => undefined);
    await removeNamespace(cluster.admin, NS);
  });

  it("mints a token that names the pod's node (user extra authentication.kubernetes.io/node-name)", async () => {
    const review = await agent.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, { metadata: {} });
    assert.equal(review.status?.userInfo?.username, AGENT_USER);
    const extra = review.status?.userInfo?.extra ?? {};
    assert.deepEqual(extra['authentication.kubernetes.io/node-name'], [nodeA.name]);
    assert.deepEqual(extra['authentication.kubernetes.io/pod-name'], [AGENT_POD]);
    const old = await unbound.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, { metadata: {} });
    assert.equal(old.status?.userInfo?.extra?.['authentication.kubernetes.io/node-name'], undefined);
  });

  it("lets the agent of node A patch node A's pod, and refuses node B's", async () => {
    // one of the annotations the agent writes (stolen-agent-token.test.ts: the only changes it may make)
    const annotate = { metadata: { annotations: { [CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION]: 'true' } } };
    const patched = await agent.patch<KubeObject>(CoreResources.pods, `pod-${nodeA.name}`, annotate, {
      type: 'merge',
      namespace: NS,
    });
    assert.equal(patched.metadata?.annotations?.[CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION], 'true');
    await denied(
      agent.patch(CoreResources.pods, `pod-${nodeB.name}`, annotate, { type: 'merge', namespace: NS }),
      new RegExp(
        `kruise-daemon of node ${nodeA.name} may not write pods ${NS}/pod-${nodeB.name}, which belongs to node ${nodeB.name}`,
      ),
    );
    // pods/status: RBAC grants the agent none, so it is refused before the policy is asked (which refuses it too)
    await assert.rejects(
      agent.patch(CoreResources.pods, `pod-${nodeA.name}`, annotate, {
        type: 'merge',
        namespace: NS,
        subresource: 'status',
      }),
      (err: unknown) => isForbidden(err) && !String(err).includes(POLICY),
    );
  });

  it("lets it patch the status of node A's CRR, and refuses node B's", async () => {
    const status = { status: { phase: 'Pending' } };
    await agent.patch(CONTAINER_RECREATE_REQUESTS, `crr-${nodeA.name}`, status, {
      type: 'merge',
      namespace: NS,
      subresource: 'status',
    });
    await denied(
      agent.patch(CONTAINER_RECREATE_REQUESTS, `crr-${nodeB.name}`, status, {
        type: 'merge',
        namespace: NS,
        subresource: 'status',
      }),
      new RegExp(
        `may not write containerrecreaterequests/status ${NS}/crr-${nodeB.name}, which belongs to node ${nodeB.name}`,
      ),
    );
  });

  it("lets it patch node A's NodeImage status, and refuses node B's", async () => {
    // the status it has (a NodeImage of a controller keeps its own): a write that changes nothing still passes
    // admission
    const statusOf = async (name: string): Promise<{ status: unknown }> => {
      const current = await cluster.admin.get<KubeObject & { status?: unknown }>(NODE_IMAGES, name);
      return { status: current.status ?? { desired: 0, succeeded: 0, failed: 0, pulling: 0, waiting: 0 } };
    };
    await agent.patch(NODE_IMAGES, nodeA.name, await statusOf(nodeA.name), { type: 'merge', subresource: 'status' });
    await denied(
      agent.patch(NODE_IMAGES, nodeB.name, await statusOf(nodeB.name), { type: 'merge', subresource: 'status' }),
      new RegExp(`may not write nodeimages/status ${nodeB.name}, which belongs to node ${nodeB.name}`),
    );
  });

  it("lets it patch node A's NodePodProbe status, and refuses node B's", async () => {
    const statusOf = async (name: string): Promise<{ status: unknown }> => {
      const current = await cluster.admin.get<KubeObject & { status?: unknown }>(NODE_POD_PROBES, name);
      return { status: current.status ?? { podProbeStatuses: [] } };
    };
    await agent.patch(NODE_POD_PROBES, nodeA.name, await statusOf(nodeA.name), {
      type: 'merge',
      subresource: 'status',
    });
    await denied(
      agent.patch(NODE_POD_PROBES, nodeB.name, await statusOf(nodeB.name), { type: 'merge', subresource: 'status' }),
      new RegExp(`may not write nodepodprobes/status ${nodeB.name}, which belongs to node ${nodeB.name}`),
    );
  });

  it("lets it write launch barriers of node A's pods only, labelled with node A, never moved to node A", async () => {
    const mine = barrier(`pod-${nodeA.name}`, nodeA);
    await agent.create(CoreResources.configMaps, mine, { namespace: NS });
    await agent.patch(
      CoreResources.configMaps,
      `pod-${nodeA.name}-barrier`,
      { data: { p_2: 'true' } },
      { type: 'merge', namespace: NS },
    );
    // node B's barrier: neither written nor relabelled as node A's
    const theirs = `pod-${nodeB.name}-barrier`;
    await denied(
      agent.patch(CoreResources.configMaps, theirs, { data: { p_2: 'true' } }, { type: 'merge', namespace: NS }),
      new RegExp(`may not write configmaps ${NS}/${theirs}, which belongs to node ${nodeB.name}`),
    );
    await denied(
      agent.patch(
        CoreResources.configMaps,
        theirs,
        { metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: nodeA.name } } },
        { type: 'merge', namespace: NS },
      ),
      new RegExp(`which belongs to node ${nodeB.name}`),
    );
    // nor its own barrier handed to node B
    await denied(
      agent.patch(
        CoreResources.configMaps,
        `pod-${nodeA.name}-barrier`,
        { metadata: { labels: { [BARRIER_NODE_NAME_LABEL]: nodeB.name } } },
        { type: 'merge', namespace: NS },
      ),
      new RegExp(`as belonging to node ${nodeB.name}`),
    );
    // a ConfigMap that is no barrier, or a barrier with other keys, or unlabelled
    await denied(
      agent.create(
        CoreResources.configMaps,
        { metadata: { name: 'settings', namespace: NS } },
        {
          namespace: NS,
        },
      ),
      /may write only launch barriers/,
    );
    const otherKeys = barrier(`pod-${nodeA.name}`, nodeA, { evil: 'true' });
    otherKeys.metadata = { ...otherKeys.metadata, name: 'x-barrier' };
    await denied(
      agent.create(CoreResources.configMaps, otherKeys, { namespace: NS }),
      /may write only launch barriers/,
    );
  });

  it('lets the first agent take over a barrier a user made beforehand, only by adding keys p_<n>', async () => {
    await cluster.admin.create(
      CoreResources.configMaps,
      { metadata: { name: 'made-by-user-barrier', namespace: NS, labels: { team: 'a' } }, data: { other: 'y' } },
      { namespace: NS },
    );
    const label = { [BARRIER_NODE_NAME_LABEL]: nodeA.name };
    await denied(
      agent.patch(
        CoreResources.configMaps,
        'made-by-user-barrier',
        { metadata: { labels: label }, data: { other: 'z' } },
        { type: 'merge', namespace: NS },
      ),
      /may write only launch barriers/,
    );
    await denied(
      agent.patch(
        CoreResources.configMaps,
        'made-by-user-barrier',
        { metadata: { labels: { ...label, team: 'b' } }, data: { p_1: 'true' } },
        { type: 'merge', namespace: NS },
      ),
      /may write only launch barriers/,
    );
    const taken = await agent.patch<KubeObject & { data?: Record<string, string> }>(
      CoreResources.configMaps,
      'made-by-user-barrier',
      { metadata: { labels: label }, data: { p_1: 'true' } },
      { type: 'merge', namespace: NS },
    );
    assert.deepEqual(taken.data, { other: 'y', p_1: 'true' });
    assert.deepEqual(taken.metadata?.labels, { team: 'a', ...label });
  });

  it('refuses every write with a token that names no node (unbound, as `kubectl create token` makes)', async () => {
    await denied(
      unbound.patch(
        CoreResources.pods,
        `pod-${nodeA.name}`,
        { metadata: { annotations: { 'e2e.kruise-daemon.io/probe': 'y' } } },
        { type: 'merge', namespace: NS },
      ),
      /only with a pod-bound token that names its node/,
    );
  });

  it("confines only the agent: the admin writes node B's pod as before", async () => {
    await cluster.admin.patch(
      CoreResources.pods,
      `pod-${nodeB.name}`,
      { metadata: { annotations: { 'e2e.kruise-daemon.io/probe': 'admin' } } },
      { type: 'merge', namespace: NS },
    );
  });

  it('grants least privilege (kubectl auth can-i --as each ServiceAccount)', () => {
    const can = (user: string, ...args: string[]): string => {
      const result = kubectl(cluster.layout, ['auth', 'can-i', `--as=${user}`, ...args]);
      return result.out.split('\n').find((line) => line === 'yes' || line === 'no') ?? result.out;
    };
    const controller = 'system:serviceaccount:kruise-system:kruise-controller';
    for (const user of [AGENT_USER, controller]) {
      assert.equal(can(user, 'get', 'secrets', '-n', 'default'), 'no', user);
      assert.equal(can(user, 'list', 'secrets', '--all-namespaces'), 'no', `${user}: secrets of every namespace`);
      assert.equal(can(user, 'get', 'secrets', '--all-namespaces'), 'no', `${user}: get any secret`);
    }
    // no secret read at all: pull credentials come from the controller (issue 26, hole 2; docs/adr/0007)
    assert.equal(can(AGENT_USER, 'get', 'secrets', '-n', 'kruise-daemon-config'), 'no');
    assert.equal(can(controller, 'get', 'secrets', '-n', 'kruise-daemon-config'), 'yes');
    assert.equal(can(AGENT_USER, 'get', 'secrets', '-n', SYSTEM_NAMESPACE), 'no');
    assert.equal(can(AGENT_USER, 'delete', 'pods', '-n', NS), 'no');
    assert.equal(can(AGENT_USER, 'get', 'configmaps', '-n', NS), 'no', 'no ConfigMap read (issue 26, hole 6)');
    assert.equal(can(AGENT_USER, 'get', 'configmaps', '-n', 'kube-system'), 'no');
    assert.equal(can(AGENT_USER, 'create', 'pods', '-n', NS), 'no');
    assert.equal(can(AGENT_USER, 'update', 'nodeimages.apps.kruise.io'), 'no');
    assert.equal(can(AGENT_USER, 'update', 'nodepodprobes.apps.kruise.io'), 'no', 'only its status');
    assert.equal(can(AGENT_USER, 'watch', 'nodepodprobes.apps.kruise.io'), 'yes');
    assert.equal(can(AGENT_USER, 'update', 'containerrecreaterequests.apps.kruise.io', '-n', NS), 'no');
    // what RBAC still grants cluster-wide, and the policy confines to the node
    assert.equal(can(AGENT_USER, 'patch', 'pods', '-n', NS), 'yes');
    assert.equal(can(AGENT_USER, 'create', 'configmaps', '-n', NS), 'yes');
  });
});
