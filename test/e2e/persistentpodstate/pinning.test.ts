// PersistentPodState end to end on the real local cluster: the real StatefulSet controller creates and recreates the
// pods, kube-scheduler places them, the real kube-apiserver calls kruise-controller's webhooks, the real kubelets run
// the pods on kruise-ipam, and our agent in each node keeps deleted pods' IPs reserved.
// 1. A StatefulSet with the auto-generate + required hostname annotations gets its PPS; its Ready pods are recorded
//    with their node; a pod deleted and recreated by the StatefulSet controller is pinned by nodeSelector to its
//    recorded node although its (new) template prefers the other node; a new ordinal is not pinned; a scale-down
//    removes the entry; deleting the StatefulSet removes the PPS.
// 2. examples/statefulset-ip-retention.yaml as written: a deleted pod comes back on its node (though that node is
//    tainted PreferNoSchedule meanwhile) with its IP, the agent records IPReused on it, and kubelet's late removal
//    of the old sandbox leaves the address with the new pod.
// 3. An invalid PPS is denied by the validating webhook.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { load as loadYaml } from 'js-yaml';
import { readState, storePaths } from '../../../src/cni/store.js';
import { CriClient } from '../../../src/cri/index.js';
import { POD_UID_LABEL } from '../../../src/daemon/podruntime/labels.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { packageRoot } from '../../../src/util/repo-root.js';
import { fillExample } from '../../cluster/dev-guide.js';
import { POD_NETWORK_NAME } from '../../cluster/k8s/nodes.js';
import { waitFor } from '../../support/wait.js';
import {
  getOrUndefined,
  HOSTNAME_LABEL,
  INJECTED_ANNOTATION,
  isReady,
  PERSISTENT_POD_STATES,
  PIN_TO_NODE_ANNOTATIONS,
  statefulSetManifest,
  STATEFULSETS,
  type PersistentPodState,
  type PodObject,
  type StatefulSetObject,
} from './manifests.js';
import { startPpsStack, type PpsStack } from './stack.js';

const NS = 'pps-e2e';
const WAIT_MS = 120_000;
/** kubelet's container GC runs every minute and removes the sandboxes of deleted pods. */
const SANDBOX_GC_TIMEOUT_MS = 180_000;

interface Taint {
  key: string;
  value?: string;
  effect: string;
}

interface NodeObject extends KubeObject {
  spec?: { taints?: Taint[] } & Record<string, unknown>;
}

/** A taint the scheduler avoids when it can (PreferNoSchedule) but that never keeps a pinned pod away. */
const AVOID_TAINT: Taint = { key: 'kruise.io/pps-e2e-avoid', value: 'true', effect: 'PreferNoSchedule' };

interface EventObject extends KubeObject {
  reason?: string;
  message?: string;
  involvedObject?: { uid?: string };
}

/** A preferred term for `node` of the highest weight: where the scheduler puts a pod unless something pins it. */
function preferNode(node: string): Record<string, unknown> {
  return {
    nodeAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 100, preference: { matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [node] }] } },
      ],
    },
  };
}

describe('persistentpodstate e2e (real cluster): StatefulSet pods pinned to their recorded node', function () {
  this.timeout(20 * 60_000); // the first run on a machine builds Kubernetes
  let stack: PpsStack;
  let nodeA: string;
  let nodeB: string;

  before(async () => {
    stack = await startPpsStack({ namespace: NS });
    [nodeA, nodeB] = stack.nodes.map((n) => n.name) as [string, string];
  });

  after(async () => {
    await stack?.close();
  });

  const client = () => stack.client;
  const getPps = (name: string) =>
    getOrUndefined(() => client().get<PersistentPodState>(PERSISTENT_POD_STATES, name, { namespace: NS }));
  const getPod = (name: string) =>
    getOrUndefined(() => client().get<PodObject>(CoreResources.pods, name, { namespace: NS }));
  const getSts = (name: string) =>
    getOrUndefined(() => client().get<StatefulSetObject>(STATEFULSETS, name, { namespace: NS }));

  async function waitForPps(
    name: string,
    check: (pps: PersistentPodState) => boolean,
    message: string,
  ): Promise<PersistentPodState> {
    let last: unknown;
    try {
      return await waitFor(
        async () => {
          const pps = await getPps(name);
          last = pps ? { spec: pps.spec, status: pps.status } : 'absent';
          return pps && check(pps) ? pps : undefined;
        },
        { timeoutMs: WAIT_MS, intervalMs: 200, message },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; last: ${JSON.stringify(last)}`);
    }
  }

  /** The pod of that name Ready; with `otherThan`, a pod of that name with another uid (a recreated one). */
  async function waitReady(name: string, otherThan?: string): Promise<PodObject> {
    return waitFor(
      async () => {
        const pod = await getPod(name);
        return isReady(pod) && pod!.metadata?.uid !== otherThan ? pod : undefined;
      },
      { timeoutMs: WAIT_MS, intervalMs: 200, message: `pod ${name}${otherThan ? ' recreated' : ''} Ready` },
    );
  }

  async function waitGone(check: () => Promise<unknown>, message: string): Promise<void> {
    await waitFor(async () => (await check()) === undefined, { timeoutMs: WAIT_MS, intervalMs: 200, message });
  }

  /** Put AVOID_TAINT on the node or take it off (a write conditional on the node read). */
  async function setAvoidTaint(node: string, on: boolean): Promise<void> {
    const current = await client().get<NodeObject>(CoreResources.nodes, node);
    const others = (current.spec?.taints ?? []).filter((t) => t.key !== AVOID_TAINT.key);
    await client().update(CoreResources.nodes, {
      ...current,
      spec: { ...current.spec, taints: on ? [...others, AVOID_TAINT] : others },
    });
  }

  async function setReplicas(name: string, replicas: number): Promise<void> {
    await client().patch(STATEFULSETS, name, { spec: { replicas } }, { type: 'merge', namespace: NS });
  }

  async function deleteStatefulSet(name: string, pods: string[]): Promise<void> {
    await client().delete(STATEFULSETS, name, { namespace: NS });
    for (const pod of pods) {
      await waitGone(() => getPod(pod), `${pod} garbage-collected with StatefulSet ${name}`);
    }
  }

  it('generates the PPS, records Ready pods, pins a recreated pod, forgets scaled-down pods, goes with the StatefulSet', async () => {
    // revision 1 puts both pods on node B; OnDelete keeps a template change away from running pods
    const sts = await client().create<StatefulSetObject>(
      STATEFULSETS,
      statefulSetManifest({
        namespace: NS,
        name: 'pin',
        replicas: 2,
        image: stack.cluster.images.busybox1,
        annotations: { ...PIN_TO_NODE_ANNOTATIONS },
        podSpec: { nodeSelector: { [HOSTNAME_LABEL]: nodeB } },
        updateStrategy: 'OnDelete',
      }),
      { namespace: NS },
    );

    // 1. the PPS is generated, named as the StatefulSet, controlled by it
    const generated = await waitForPps('pin', () => true, 'PersistentPodState pin generated');
    assert.deepEqual(generated.spec, {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'pin' },
      requiredPersistentTopology: { nodeTopologyKeys: [HOSTNAME_LABEL] },
    });
    assert.equal(generated.metadata?.ownerReferences?.[0]?.uid, sts.metadata?.uid);
    assert.equal(generated.metadata?.ownerReferences?.[0]?.controller, true);

    // 2. the StatefulSet controller creates both pods, they run on node B and are recorded there
    for (const name of ['pin-0', 'pin-1']) assert.equal((await waitReady(name)).spec?.nodeName, nodeB);
    await waitForPps(
      'pin',
      (p) =>
        isDeepStrictEqual(p.status?.podStates, {
          'pin-0': { nodeName: nodeB, nodeTopologyLabels: { [HOSTNAME_LABEL]: nodeB } },
          'pin-1': { nodeName: nodeB, nodeTopologyLabels: { [HOSTNAME_LABEL]: nodeB } },
        }),
      'pin-0 and pin-1 recorded on node B',
    );

    // 3. revision 2 drops the node selector and prefers node A; pin-0 deleted is recreated by the StatefulSet
    //    controller from revision 2, and the webhook pins it to node B, where the scheduler then has to put it
    const updated = await client().patch<StatefulSetObject>(
      STATEFULSETS,
      'pin',
      { spec: { template: { spec: { nodeSelector: null, affinity: preferNode(nodeA) } } } },
      { type: 'merge', namespace: NS },
    );
    await waitFor(
      async () => {
        const s = await getSts('pin');
        return (s?.status?.observedGeneration ?? 0) >= (updated.metadata?.generation ?? 0) &&
          s?.status?.updateRevision !== s?.status?.currentRevision
          ? s
          : undefined;
      },
      { timeoutMs: WAIT_MS, intervalMs: 200, message: 'the StatefulSet controller to see revision 2' },
    );
    const oldUid = (await getPod('pin-0'))!.metadata!.uid!;
    await client().delete(CoreResources.pods, 'pin-0', { namespace: NS });
    const recreated = await waitReady('pin-0', oldUid);
    assert.deepEqual(recreated.spec?.affinity, preferNode(nodeA), 'the recreated pod is of revision 2');
    assert.deepEqual(recreated.spec?.nodeSelector, { [HOSTNAME_LABEL]: nodeB });
    assert.equal(recreated.metadata?.annotations?.[INJECTED_ANNOTATION], 'pin');
    assert.equal(recreated.spec?.nodeName, nodeB);

    // 4. scale up: pin-2 has no entry, is not pinned, follows revision 2's preference to node A, is recorded there
    await setReplicas('pin', 3);
    const fresh = await waitReady('pin-2');
    assert.equal(fresh.spec?.nodeSelector, undefined);
    assert.equal(fresh.metadata?.annotations?.[INJECTED_ANNOTATION], undefined);
    assert.equal(fresh.spec?.nodeName, nodeA);
    await waitForPps('pin', (p) => p.status?.podStates?.['pin-2']?.nodeName === nodeA, 'pin-2 recorded on node A');

    // 5. scale down to 2: the StatefulSet controller deletes pin-2; once it is gone its entry goes, the others stay
    await setReplicas('pin', 2);
    await waitGone(() => getPod('pin-2'), 'pin-2 deleted by the StatefulSet controller');
    const scaled = await waitForPps(
      'pin',
      (p) => !p.status?.podStates?.['pin-2'],
      'pin-2 entry removed after scale-down',
    );
    assert.deepEqual(Object.keys(scaled.status?.podStates ?? {}).sort(), ['pin-0', 'pin-1']);
    assert.equal(scaled.status?.observedGeneration, scaled.metadata?.generation);

    // 6. the StatefulSet deleted: its PPS goes (ownerReference garbage collection), and its pods
    await deleteStatefulSet('pin', ['pin-0', 'pin-1']);
    await waitGone(() => getPps('pin'), 'PersistentPodState pin deleted with its StatefulSet');
  });

  it('examples/statefulset-ip-retention.yaml: a deleted pod is recreated on its node with its reserved IP (IPReused)', async () => {
    const text = fillExample(readFileSync(join(packageRoot(), 'examples', 'statefulset-ip-retention.yaml'), 'utf8'), {
      registry: stack.cluster.registry,
      node: nodeA,
    });
    const example = loadYaml(text) as StatefulSetObject;
    const name = example.metadata!.name!;
    example.metadata!.namespace = NS;
    await client().create(STATEFULSETS, example, { namespace: NS });

    const pods = [`${name}-0`, `${name}-1`];
    const before = new Map<string, PodObject>();
    for (const pod of pods) before.set(pod, await waitReady(pod));
    await waitForPps(
      name,
      (p) => pods.every((pod) => p.status?.podStates?.[pod]?.nodeName === before.get(pod)!.spec?.nodeName),
      `${pods.join(' and ')} recorded on their nodes`,
    );
    const first = before.get(pods[0]!)!;
    assert.ok(first.status?.podIP, `${pods[0]} has an IP`);

    // its node tainted PreferNoSchedule: the scheduler alone would now put the recreated pod on the other node
    const node = first.spec!.nodeName!;
    await setAvoidTaint(node, true);
    let second: PodObject;
    try {
      await client().delete(CoreResources.pods, pods[0]!, { namespace: NS });
      second = await waitReady(pods[0]!, first.metadata!.uid);
    } finally {
      await setAvoidTaint(node, false);
    }
    assert.equal(second.spec?.nodeName, node, 'the same node');
    assert.equal(second.status?.podIP, first.status?.podIP, 'the same IP');
    assert.deepEqual(second.spec?.nodeSelector, { [HOSTNAME_LABEL]: node });
    assert.equal(second.metadata?.annotations?.[INJECTED_ANNOTATION], name);
    const reused = await waitFor(
      async () => {
        const events = await client().list<EventObject>(CoreResources.events, {
          namespace: NS,
          fieldSelector: `involvedObject.uid=${second.metadata!.uid!},reason=IPReused`,
        });
        return events.items[0];
      },
      { timeoutMs: WAIT_MS, intervalMs: 200, message: `the IPReused event on the recreated ${pods[0]}` },
    );
    assert.match(reused.message ?? '', new RegExp(`reserved IP ${first.status.podIP.replace(/\./g, '\\.')} back`));

    // the real kubelet removes the old sandbox only later (its container GC): that late CNI DEL must leave the
    // address with the recreated pod
    const nodeLayout = stack.nodes.find((n) => n.name === node)!;
    const cri = new CriClient({ socket: nodeLayout.hostPaths.runtimeSocket });
    try {
      await waitFor(
        async () => {
          const old = await cri.listPodSandbox({
            filter: { label_selector: { [POD_UID_LABEL]: first.metadata!.uid! } },
          });
          return old.items.length === 0;
        },
        { timeoutMs: SANDBOX_GC_TIMEOUT_MS, intervalMs: 1000, message: `kubelet to remove the old ${pods[0]} sandbox` },
      );
    } finally {
      cri.close();
    }
    const store = readState(storePaths(join(nodeLayout.hostPaths.cniStateDir, 'kruise-ipam'), POD_NETWORK_NAME));
    const entry = store.entries[first.status.podIP];
    assert.equal(entry?.kind, 'held', JSON.stringify(entry));
    assert.equal(entry.pod?.uid, second.metadata.uid);

    await deleteStatefulSet(name, pods);
  });

  it('denies an invalid PersistentPodState through the validating webhook, naming the field', async () => {
    const attempt = client().create(
      PERSISTENT_POD_STATES,
      {
        metadata: { name: 'bad', namespace: NS },
        spec: {
          targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' },
          preferredPersistentTopology: [{ weight: 0, preference: { nodeTopologyKeys: [HOSTNAME_LABEL] } }],
        },
      },
      { namespace: NS },
    );
    await assert.rejects(attempt, (err: unknown) => {
      assert.ok(err instanceof ApiError, String(err));
      assert.match(err.message, /vpersistentpodstate\.kb\.io/);
      assert.match(err.message, /spec\.preferredPersistentTopology\[0\]\.weight: Invalid value: 0/);
      return true;
    });
  });
});
