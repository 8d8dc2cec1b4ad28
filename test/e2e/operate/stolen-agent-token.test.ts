// The attack of issue 26 (holes 1, 7 and the Events part of 6) on the real API server, against deploy/node-confinement:
// node A's agent token, stolen, tries to rewrite a pod of node A (image, tolerations, activeDeadlineSeconds, labels,
// finalizers, owners, other annotations, pods/status), a token bound to the Node object instead of a pod tries to pass
// as node A's agent, and Events are forged as kubelet or as another node's agent. Each is refused with the policy's
// message; each write the agent really makes (its four pod annotations, through the agent's own code where it can be
// called alone, and its Events through its EventRecorder) still passes.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION,
  EVENT_SOURCE_IMAGE_PULLER,
  IN_PLACE_UPDATE_STATE_ANNOTATION,
  RUNTIME_CONTAINERS_META_ANNOTATION,
} from '../../../src/api/constants.js';
import { NODE_IMAGES } from '../../../src/api/nodeimage.js';
import { EVENT_SOURCE_CONTAINER_RECREATE } from '../../../src/daemon/containerrecreate/controller.js';
import { KubeBarrierApi } from '../../../src/daemon/launchpriority/barrier-api.js';
import { BARRIER_RELEASED_ANNOTATION } from '../../../src/daemon/launchpriority/controller.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { ApiError, isForbidden, isNotFound } from '../../../src/kube/errors.js';
import { EventRecorder } from '../../../src/kube/event-recorder.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources, type ResourceType } from '../../../src/kube/resource.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { serviceAccountKubeconfig, SYSTEM_NAMESPACE } from '../../cluster/k8s/system.js';
import { SELF_SUBJECT_REVIEWS, type SelfSubjectReview } from '../../support/kube-resources.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace, ROLE_BINDINGS, ROLES, type CoreEvent } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';
import { deniedBy, refusedBy } from '../../support/policy-denial.js';

const NS = 'e2e-stolen-agent-token';
const AGENT_POD = 'e2e-stolen-token-agent';
const POLICY = "ValidatingAdmissionPolicy 'kruise-daemon-node-confinement'";
const POD_RULE = new RegExp(
  'kruise-daemon may change on a pod only the annotations apps\\.kruise\\.io/runtime-containers-meta, ' +
    'apps\\.kruise\\.io/inplace-update-state, apps\\.kruise\\.io/container-launch-barrier-released and ' +
    'apps\\.kruise\\.io/container-launch-priority-completed \\(set, never removed\\), and never pods/status',
);
const EXTRA = 'authentication.kubernetes.io/';
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const EVENTS_K8S_IO: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  resource: 'events',
  namespaced: true,
  kind: 'Event',
};

const refusedByPolicy = (err: unknown, message: RegExp): true => refusedBy(err, POLICY, message);
const deniedByPolicy = (request: Promise<unknown>, message: RegExp): Promise<void> =>
  deniedBy(request, POLICY, message);

describe('a stolen agent token against deploy/node-confinement (issue 26: holes 1, 7, Events)', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let nodeA: NodeLayout;
  let nodeB: NodeLayout;
  let agent: KubeClient; // node A's agent: a token bound to a pod of kruise-daemon on node A
  let nodeBound: KubeClient; // the same ServiceAccount, token bound to the Node object A
  const files: string[] = [];
  const uids: Record<string, string> = {};

  function pod(name: string, node: NodeLayout, namespace = NS, extra: Partial<KubeObject['metadata']> = {}) {
    return {
      metadata: { name, namespace, ...extra },
      spec: {
        nodeName: node.name,
        ...(namespace === SYSTEM_NAMESPACE
          ? { serviceAccountName: 'kruise-daemon', automountServiceAccountToken: false }
          : {}),
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: cluster.vars.SANDBOX_IMAGE!, imagePullPolicy: 'IfNotPresent' }],
      },
    } as KubeObject;
  }

  async function createPod(name: string, node: NodeLayout, extra: Partial<KubeObject['metadata']> = {}) {
    const created = await cluster.admin.create(CoreResources.pods, pod(name, node, NS, extra), { namespace: NS });
    uids[name] = created.metadata?.uid ?? '';
    return created;
  }

  async function deleteAgentPod(): Promise<void> {
    await cluster.admin
      .delete(CoreResources.pods, AGENT_POD, { namespace: SYSTEM_NAMESPACE, gracePeriodSeconds: 0 })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  // were an attack let through (a policy without these rules), its finalizer would keep the namespace forever
  async function releaseVictim(): Promise<void> {
    await cluster.admin
      .patch(CoreResources.pods, 'victim', { metadata: { finalizers: null } }, { type: 'merge', namespace: NS })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  before(async () => {
    cluster = await useRealCluster();
    [nodeA, nodeB] = cluster.nodes as [NodeLayout, NodeLayout];
    await releaseVictim();
    await freshNamespace(cluster.admin, NS);
    await deleteAgentPod();
    await cluster.admin.create(CoreResources.pods, pod(AGENT_POD, nodeA, SYSTEM_NAMESPACE), {
      namespace: SYSTEM_NAMESPACE,
    });
    const credentials = join(cluster.layout.k8sDir, 'credentials');
    const podFile = join(credentials, 'e2e-stolen-pod-bound.kubeconfig');
    const nodeFile = join(credentials, 'e2e-stolen-node-bound.kubeconfig');
    files.push(podFile, nodeFile);
    serviceAccountKubeconfig(cluster.layout, SYSTEM_NAMESPACE, 'kruise-daemon', podFile, 1, AGENT_POD);
    serviceAccountKubeconfig(cluster.layout, SYSTEM_NAMESPACE, 'kruise-daemon', nodeFile, 1, nodeA.name, 'Node');
    agent = new KubeClient(await loadKubeconfig(podFile), { timeoutMs: 20_000 });
    nodeBound = new KubeClient(await loadKubeconfig(nodeFile), { timeoutMs: 20_000 });
    // the tenant's pod on node A: annotated by its owner, and by the agent before (its containers' meta)
    await createPod('victim', nodeA, {
      annotations: { 'tenant.example/owner': 'alice', [RUNTIME_CONTAINERS_META_ANNOTATION]: '{"containers":[]}' },
    });
    await createPod('bare', nodeA); // no annotations at all
    await createPod('elsewhere', nodeB);
  });

  after(async () => {
    agent?.close();
    nodeBound?.close();
    for (const file of files) rmSync(file, { force: true });
    if (!cluster) return;
    await deleteAgentPod();
    await releaseVictim();
    await removeNamespace(cluster.admin, NS);
  });

  it('what each token carries: pod-bound names pod and node, Node-bound names only the node', async () => {
    const pod = (await agent.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, { metadata: {} })).status?.userInfo;
    const extra = pod?.extra ?? {};
    assert.deepEqual(extra[`${EXTRA}pod-name`], [AGENT_POD]);
    assert.equal(extra[`${EXTRA}pod-uid`]?.length, 1);
    assert.deepEqual(extra[`${EXTRA}node-name`], [nodeA.name]);
    assert.equal(extra[`${EXTRA}node-uid`]?.length, 1);
    const node = (await nodeBound.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, { metadata: {} })).status?.userInfo;
    assert.equal(node?.username, pod?.username);
    assert.deepEqual(node?.extra?.[`${EXTRA}node-name`], [nodeA.name]);
    assert.equal(node?.extra?.[`${EXTRA}node-uid`]?.length, 1);
    assert.equal(node?.extra?.[`${EXTRA}pod-name`], undefined);
    assert.equal(node?.extra?.[`${EXTRA}pod-uid`], undefined);
    // for the report: the exact extras of both kinds on this API server
    console.log(
      `      pod-bound extras: ${Object.keys(extra).sort().join(', ')}; ` +
        `Node-bound extras: ${Object.keys(node?.extra ?? {})
          .sort()
          .join(', ')}`,
    );
  });

  it("still lets the agent write its own annotations on node A's pods, as its code writes them", async () => {
    // src/daemon/containermeta: a merge patch of the two annotations
    const meta = '{"containers":[{"name":"c","containerID":"containerd://x","restartCount":0,"hashes":{}}]}';
    const state = '{"revision":"","updateTimestamp":"2026-01-01T00:00:00Z","updateEnvFromMetadata":true}';
    const patched = await agent.patch<KubeObject>(
      CoreResources.pods,
      'victim',
      {
        metadata: {
          annotations: { [RUNTIME_CONTAINERS_META_ANNOTATION]: meta, [IN_PLACE_UPDATE_STATE_ANNOTATION]: state },
        },
      },
      { type: 'merge', namespace: NS },
    );
    assert.equal(patched.metadata?.annotations?.[RUNTIME_CONTAINERS_META_ANNOTATION], meta);
    // src/daemon/launchpriority: its JSON patch (uid test, then add each key) ...
    const barriers = new KubeBarrierApi(agent, nodeA.name);
    const released = { [BARRIER_RELEASED_ANNOTATION]: 'p_1', [CONTAINER_LAUNCH_PRIORITY_COMPLETED_ANNOTATION]: 'true' };
    await barriers.annotatePod(NS, 'victim', uids.victim!, released);
    // ... and on a pod without annotations, the whole map at the resourceVersion the cache saw
    const bare = await cluster.admin.get<KubeObject>(CoreResources.pods, 'bare', { namespace: NS });
    await barriers.annotatePod(
      NS,
      'bare',
      uids.bare!,
      { [BARRIER_RELEASED_ANNOTATION]: 'p_0' },
      bare.metadata?.resourceVersion,
    );
    const after = await cluster.admin.get<KubeObject>(CoreResources.pods, 'victim', { namespace: NS });
    assert.equal(after.metadata?.annotations?.[BARRIER_RELEASED_ANNOTATION], 'p_1');
    assert.equal(after.metadata?.annotations?.['tenant.example/owner'], 'alice');
  });

  const forbidden: Array<{ what: string; patch: unknown; type: 'json' | 'merge'; changes: string }> = [
    {
      what: "a container's image",
      type: 'json',
      patch: [{ op: 'replace', path: '/spec/containers/0/image', value: 'registry.example/attacker:1' }],
      changes: 'spec',
    },
    {
      what: 'a toleration',
      type: 'json',
      patch: [{ op: 'add', path: '/spec/tolerations/-', value: { operator: 'Exists' } }],
      changes: 'spec',
    },
    { what: 'activeDeadlineSeconds', type: 'merge', patch: { spec: { activeDeadlineSeconds: 1 } }, changes: 'spec' },
    { what: 'a label', type: 'merge', patch: { metadata: { labels: { app: 'attacker' } } }, changes: 'labels' },
    {
      what: 'a finalizer',
      type: 'merge',
      patch: { metadata: { finalizers: ['attacker.example/hold'] } },
      changes: 'finalizers',
    },
    {
      what: 'an owner (the garbage collector deletes a pod whose owner is gone)',
      type: 'merge',
      patch: {
        metadata: {
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: '00000000-0000-0000-0000-000000000001' },
          ],
        },
      },
      changes: 'ownerReferences',
    },
    {
      what: 'another annotation',
      type: 'merge',
      patch: { metadata: { annotations: { 'attacker.example/x': 'y' } } },
      changes: 'annotation attacker.example/x',
    },
    {
      what: "the tenant's annotation",
      type: 'merge',
      patch: { metadata: { annotations: { 'tenant.example/owner': 'mallory' } } },
      changes: 'annotation tenant.example/owner',
    },
    {
      what: "the tenant's annotation, removed",
      type: 'json',
      patch: [{ op: 'remove', path: '/metadata/annotations/tenant.example~1owner' }],
      changes: 'annotation tenant.example/owner',
    },
    {
      what: "one of the agent's annotations, removed",
      type: 'json',
      patch: [{ op: 'remove', path: '/metadata/annotations/apps.kruise.io~1runtime-containers-meta' }],
      changes: `annotation ${RUNTIME_CONTAINERS_META_ANNOTATION}`,
    },
  ];
  for (const { what, patch, type, changes } of forbidden) {
    it(`refuses node A's agent ${what} on a pod of node A`, async () => {
      await deniedByPolicy(
        agent.patch(CoreResources.pods, 'victim', patch, { type, namespace: NS }),
        new RegExp(`${POD_RULE.source}: not this write of pods ${NS}/victim, which changes ${changes}$`),
      );
    });
  }

  it('refuses it a write that hides a spec change among its own annotations', async () => {
    await deniedByPolicy(
      agent.patch(
        CoreResources.pods,
        'victim',
        [
          { op: 'test', path: '/metadata/uid', value: uids.victim },
          { op: 'add', path: '/metadata/annotations/apps.kruise.io~1container-launch-priority-completed', value: 'x' },
          { op: 'replace', path: '/spec/containers/0/image', value: 'registry.example/attacker:1' },
        ],
        { type: 'json', namespace: NS },
      ),
      /which changes spec$/,
    );
    const victim = await cluster.admin.get<KubeObject & { spec: { containers: Array<{ image: string }> } }>(
      CoreResources.pods,
      'victim',
      { namespace: NS },
    );
    assert.equal(victim.spec.containers[0]?.image, cluster.vars.SANDBOX_IMAGE);
    assert.equal(victim.metadata?.annotations?.['tenant.example/owner'], 'alice');
    assert.equal(victim.metadata?.ownerReferences, undefined);
  });

  it('refuses pods/status even where a role grants it (RBAC grants the agent none)', async () => {
    const role = 'e2e-pods-status';
    await cluster.admin.create(
      ROLES,
      {
        metadata: { name: role, namespace: NS },
        rules: [{ apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] }],
      },
      { namespace: NS },
    );
    await cluster.admin.create(
      ROLE_BINDINGS,
      {
        metadata: { name: role, namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
        subjects: [{ kind: 'ServiceAccount', name: 'kruise-daemon', namespace: SYSTEM_NAMESPACE }],
      },
      { namespace: NS },
    );
    const write = () =>
      agent.patch(
        CoreResources.pods,
        'victim',
        { metadata: { annotations: { [BARRIER_RELEASED_ANNOTATION]: 'p_9' } } },
        { type: 'merge', namespace: NS, subresource: 'status' },
      );
    // the authorizer sees the new binding after a moment: until then RBAC refuses, then the policy does
    const refusal = await waitFor(
      () =>
        write().then(
          () => new Error('pods/status was written'),
          (err: unknown) => (String(err).includes(POLICY) || !isForbidden(err) ? err : undefined),
        ),
      { timeoutMs: 30_000, message: 'the pods/status role to reach the authorizer' },
    );
    refusedByPolicy(refusal, new RegExp(`${POD_RULE.source}: not this write of pods/status ${NS}/victim$`));
  });

  it('refuses a token bound to the Node object, though it names node A', async () => {
    const annotate = { metadata: { annotations: { [BARRIER_RELEASED_ANNOTATION]: 'p_2' } } };
    await deniedByPolicy(
      nodeBound.patch(CoreResources.pods, 'victim', annotate, { type: 'merge', namespace: NS }),
      new RegExp(
        `kruise-daemon may write pods ${NS}/victim only with a token bound to its pod \\(user extras ` +
          `authentication.kubernetes.io/pod-name and pod-uid\\): this token names node ${nodeA.name} but no pod`,
      ),
    );
    await deniedByPolicy(
      // an Event as node A's agent, otherwise as the agent writes them
      nodeBound.create(
        CoreResources.events,
        {
          metadata: { name: 'node-bound', namespace: NS },
          involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'victim', uid: uids.victim },
          reason: 'Forged',
          message: 'by a Node-bound token',
          type: 'Normal',
          source: { component: EVENT_SOURCE_CONTAINER_RECREATE, host: nodeA.name },
          reportingComponent: EVENT_SOURCE_CONTAINER_RECREATE,
          reportingInstance: nodeA.name,
        } as KubeObject,
        { namespace: NS },
      ),
      new RegExp(`may write events ${NS}/node-bound only with a token bound to its pod`),
    );
  });

  describe('Events', () => {
    function event(name: string, fields: Record<string, unknown>, namespace = NS): CoreEvent {
      return {
        metadata: { name, namespace },
        involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'victim', uid: uids.victim },
        reason: 'Forged',
        message: 'forged by a stolen token',
        type: 'Normal',
        source: { component: EVENT_SOURCE_CONTAINER_RECREATE, host: nodeA.name },
        reportingComponent: EVENT_SOURCE_CONTAINER_RECREATE,
        reportingInstance: nodeA.name,
        firstTimestamp: new Date().toISOString(),
        lastTimestamp: new Date().toISOString(),
        count: 1,
        ...fields,
      } as CoreEvent;
    }
    const create = (e: CoreEvent) => agent.create(CoreResources.events, e, { namespace: e.metadata?.namespace });

    it("still records the agent's own Events (its EventRecorder, a repeat patched as count 2)", async () => {
      const since = Date.now();
      for (const [component, subject, rt] of [
        [
          EVENT_SOURCE_CONTAINER_RECREATE,
          { metadata: { namespace: NS, name: 'victim', uid: uids.victim } },
          CoreResources.pods,
        ],
        [EVENT_SOURCE_IMAGE_PULLER, { metadata: { name: nodeA.name } }, NODE_IMAGES],
      ] as const) {
        const recorder = new EventRecorder(agent, { component, host: nodeA.name });
        const reason = `E2eOwn${since}`;
        recorder.event(subject, 'Normal', reason, 'recorded by the agent', rt);
        recorder.event(subject, 'Normal', reason, 'recorded by the agent', rt);
        await recorder.close();
        const namespace = rt === NODE_IMAGES ? 'default' : NS;
        const events = await cluster.admin.list<CoreEvent>(CoreResources.events, { namespace });
        const mine = events.items.filter((e) => e.reason === reason && e.involvedObject.name === subject.metadata.name);
        assert.equal(mine.length, 1, `${component}: one Event in ${namespace}`);
        assert.equal(mine[0]?.count, 2, `${component}: its repeat patched`);
      }
    });

    it('refuses an Event as kubelet@node-B about a pod of node B', async () => {
      await deniedByPolicy(
        create(
          event('forged-kubelet-b', {
            involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'elsewhere', uid: uids.elsewhere },
            source: { component: 'kubelet', host: nodeB.name },
            reportingComponent: 'kubelet',
            reportingInstance: nodeB.name,
          }),
        ),
        new RegExp(
          `kruise-daemon of node ${nodeA.name} may not write events ${NS}/forged-kubelet-b ` +
            `as belonging to node ${nodeB.name}`,
        ),
      );
    });

    // node names are known once the cluster is up: each case is a function of them
    type Nodes = { a: string; b: string };
    const forged: Array<{
      what: string;
      fields: (n: Nodes) => Record<string, unknown>;
      problem: (n: Nodes) => string;
    }> = [
      {
        what: 'as kubelet on its own node',
        fields: (n) => ({ source: { component: 'kubelet', host: n.a }, reportingComponent: 'kubelet' }),
        problem: () => 'source.component and reportingComponent must be kruise-daemon or kruise-daemon-<part>',
      },
      {
        what: 'with source.host node B (reportingInstance node A)',
        fields: (n) => ({ source: { component: EVENT_SOURCE_CONTAINER_RECREATE, host: n.b } }),
        problem: (n) => `source.host must be ${n.a}`,
      },
      ...(['Node', 'NodeImage', 'NodePodProbe'] as const).map((kind) => ({
        what: `about node B's ${kind}`,
        fields: (n: Nodes) => ({
          involvedObject: { apiVersion: kind === 'Node' ? 'v1' : 'apps.kruise.io/v1alpha1', kind, name: n.b },
        }),
        problem: (n: Nodes) => `about a ${kind} only of node ${n.a}`,
      })),
      {
        what: 'about a Secret',
        fields: () => ({ involvedObject: { apiVersion: 'v1', kind: 'Secret', namespace: NS, name: 'db-password' } }),
        problem: () => 'not a Secret',
      },
      {
        what: 'with a related object',
        fields: () => ({ related: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'elsewhere' } }),
        problem: () => 'no related object',
      },
    ];
    for (const [i, { what, fields, problem }] of forged.entries()) {
      it(`refuses an Event ${what}`, async () => {
        const nodes = { a: nodeA.name, b: nodeB.name };
        const forgedEvent = event(`forged-${i}`, fields(nodes));
        // about a cluster-scoped object: in namespace default, as the agent's recorder puts it
        const clusterScoped = forgedEvent.involvedObject.namespace === undefined;
        if (clusterScoped) forgedEvent.metadata = { ...forgedEvent.metadata, namespace: 'default' };
        await deniedByPolicy(
          create(forgedEvent),
          new RegExp(
            `kruise-daemon of node ${nodeA.name} may write Events only as itself on its node: not events ` +
              `${clusterScoped ? 'default' : NS}/forged-${i} \\(.*${escape(problem(nodes))}`,
          ),
        );
      });
    }

    it("refuses a patch of kubelet's Event on its own node", async () => {
      await cluster.admin.create(
        CoreResources.events,
        event('by-kubelet', { source: { component: 'kubelet', host: nodeA.name }, reportingComponent: 'kubelet' }),
        { namespace: NS },
      );
      await deniedByPolicy(
        agent.patch(
          CoreResources.events,
          'by-kubelet',
          { count: 2, message: 'rewritten' },
          { type: 'merge', namespace: NS },
        ),
        /an Event that another component or node recorded/,
      );
    });

    it('events.k8s.io/v1: RBAC grants the agent none', async () => {
      await assert.rejects(
        agent.create(
          EVENTS_K8S_IO,
          {
            metadata: { name: 'forged-events-k8s-io', namespace: NS },
            eventTime: new Date().toISOString(),
            reportingController: 'kubelet',
            reportingInstance: nodeB.name,
            action: 'Forged',
            reason: 'Forged',
            regarding: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'elsewhere' },
            type: 'Normal',
          } as KubeObject,
          { namespace: NS },
        ),
        (err: unknown) => err instanceof ApiError && err.code === 403 && !String(err).includes(POLICY),
      );
    });

    it("cannot tell which node a Pod is on: an Event about node B's pod, as node A's agent, passes", async () => {
      await create(
        event('about-elsewhere', {
          involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'elsewhere', uid: uids.elsewhere },
        }),
      );
    });
  });

  describe('once its pod is gone', () => {
    it('a pod-bound token dies with its pod; the Node-bound one would outlive it (and is refused)', async () => {
      await deleteAgentPod();
      await waitFor(
        () =>
          agent.create(SELF_SUBJECT_REVIEWS, { metadata: {} }).then(
            () => false,
            (err: unknown) => err instanceof ApiError && err.code === 401,
          ),
        { timeoutMs: 60_000, message: 'the pod-bound token to be refused once its pod is gone' },
      );
      const review = await nodeBound.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, { metadata: {} });
      assert.deepEqual(review.status?.userInfo?.extra?.[`${EXTRA}node-name`], [nodeA.name]);
    });
  });
});
