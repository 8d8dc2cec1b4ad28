// PersistentPodState end to end: kruise-controller as a real process (controller + its admission webhooks, called by
// the API emulator), kubelet-lite running two nodes on the real containerd, a test scheduler. A StatefulSet with the
// auto-generate + required hostname annotations gets its PPS; its Ready pods are recorded with their node; a pod
// deleted and recreated under the same name is pinned by nodeSelector to its recorded node (while the scheduler would
// otherwise put it elsewhere); a scale-down removes the entry; deleting the StatefulSet removes the PPS.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { RESERVED_IP_DURATION_ANNOTATION } from '../../../src/api/constants.js';
import { connectRuntime } from '../../../src/cri/index.js';
import { ApiError } from '../../../src/kube/errors.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import { installTestPlugin, rangeOf, removeTestConflist, Sandboxes, useNetwork } from '../../component/ipam/network.js';
import {
  getOrUndefined,
  HOSTNAME_LABEL,
  isReady,
  PERSISTENT_POD_STATES,
  startPpsStack,
  statefulSetManifest,
  statefulSetPod,
  STATEFULSETS,
  type PersistentPodStateObject,
  type PodObject,
  type PpsStack,
  type StatefulSetObject,
} from './stack.js';

const NS = 'pps-e2e';
const NODE_A = 'pps-node-a';
const NODE_B = 'pps-node-b';
const INJECTED = 'kruise.io/injected-persistent-pod-state';

describe('persistentpodstate e2e: StatefulSet pods pinned to their recorded node', function () {
  this.timeout(240_000);
  let stack: PpsStack;

  before(async () => {
    stack = await startPpsStack({ namespace: NS, nodes: [NODE_A, NODE_B] });
    await stack.env.startController();
    await stack.env.controller!.leading();
  });

  after(async () => {
    await stack?.close();
  });

  const client = () => stack.env.client;
  const getPps = (name: string) =>
    getOrUndefined(() => client().get<PersistentPodStateObject>(PERSISTENT_POD_STATES, name, { namespace: NS }));
  const getPod = (name: string) =>
    getOrUndefined(() => client().get<PodObject>(CoreResources.pods, name, { namespace: NS }));

  async function waitForPps(
    name: string,
    check: (pps: PersistentPodStateObject) => boolean,
    message: string,
  ): Promise<PersistentPodStateObject> {
    let last: unknown;
    try {
      return await waitFor(
        async () => {
          const pps = await getPps(name);
          last = pps ? { spec: pps.spec, status: pps.status } : 'absent';
          return pps && check(pps) ? pps : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100, message },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; last: ${JSON.stringify(last)}`);
    }
  }

  async function waitReady(name: string): Promise<PodObject> {
    return waitFor(
      async () => {
        const pod = await getPod(name);
        return isReady(pod) ? pod : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 100, message: `pod ${name} Ready` },
    );
  }

  async function deleteAndWaitGone(name: string): Promise<void> {
    await client().delete(CoreResources.pods, name, { namespace: NS });
    await waitFor(async () => (await getPod(name)) === undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: `pod ${name} gone (kubelet-lite finished it)`,
    });
  }

  async function setReplicas(sts: StatefulSetObject, replicas: number): Promise<void> {
    await client().patch(STATEFULSETS, sts.metadata!.name!, { spec: { replicas } }, { type: 'merge', namespace: NS });
  }

  it('generates the PPS, records Ready pods, pins a recreated pod, forgets scaled-down pods, goes with the StatefulSet', async () => {
    const image = stack.cluster.images.busybox1;
    const sts = await client().create<StatefulSetObject>(
      STATEFULSETS,
      statefulSetManifest(NS, 'web', 2, image, {
        'kruise.io/auto-generate-persistent-pod-state': 'true',
        'kruise.io/required-persistent-topology': HOSTNAME_LABEL,
      }),
    );

    // 1. the PPS is generated, named as the StatefulSet, controlled by it
    const generated = await waitForPps('web', () => true, 'PersistentPodState web generated');
    assert.deepEqual(generated.spec, {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' },
      requiredPersistentTopology: { nodeTopologyKeys: [HOSTNAME_LABEL] },
    });
    assert.equal(generated.metadata?.ownerReferences?.[0]?.uid, sts.metadata?.uid);
    assert.equal(generated.metadata?.ownerReferences?.[0]?.controller, true);

    // 2. both pods land on node B (scheduler order), become Ready, and are recorded there
    stack.setScheduleOrder([NODE_B, NODE_A]);
    for (const ordinal of [0, 1]) {
      await client().create(CoreResources.pods, statefulSetPod(sts, ordinal), { namespace: NS });
    }
    for (const name of ['web-0', 'web-1']) assert.equal((await waitReady(name)).spec?.nodeName, NODE_B);
    await waitForPps(
      'web',
      (p) =>
        isDeepStrictEqual(p.status?.podStates, {
          'web-0': { nodeName: NODE_B, nodeTopologyLabels: { [HOSTNAME_LABEL]: NODE_B } },
          'web-1': { nodeName: NODE_B, nodeTopologyLabels: { [HOSTNAME_LABEL]: NODE_B } },
        }),
      'web-0 and web-1 recorded on node B',
    );

    // 3. web-0 deleted and recreated under the same name: the scheduler now prefers node A, the webhook pins it to B
    const oldUid = (await getPod('web-0'))!.metadata!.uid;
    await deleteAndWaitGone('web-0');
    assert.equal((await getPps('web'))?.status?.podStates?.['web-0']?.nodeName, NODE_B, 'the entry outlives the pod');
    stack.setScheduleOrder([NODE_A, NODE_B]);
    const recreated = await client().create<PodObject>(CoreResources.pods, statefulSetPod(sts, 0), { namespace: NS });
    assert.notEqual(recreated.metadata?.uid, oldUid);
    assert.deepEqual(recreated.spec?.nodeSelector, { [HOSTNAME_LABEL]: NODE_B });
    assert.equal(recreated.metadata?.annotations?.[INJECTED], 'web');
    assert.equal((await waitReady('web-0')).spec?.nodeName, NODE_B);

    // 4. scale up: web-2 has no entry, is not pinned, lands on node A and is recorded there
    await setReplicas(sts, 3);
    const fresh = await client().create<PodObject>(CoreResources.pods, statefulSetPod(sts, 2), { namespace: NS });
    assert.equal(fresh.spec?.nodeSelector, undefined);
    assert.equal(fresh.metadata?.annotations?.[INJECTED], undefined);
    assert.equal((await waitReady('web-2')).spec?.nodeName, NODE_A);
    await waitForPps('web', (p) => p.status?.podStates?.['web-2']?.nodeName === NODE_A, 'web-2 recorded on node A');

    // 5. scale down to 2: once web-2 is gone its entry goes; the others stay
    await setReplicas(sts, 2);
    await deleteAndWaitGone('web-2');
    const scaled = await waitForPps(
      'web',
      (p) => !p.status?.podStates?.['web-2'],
      'web-2 entry removed after scale-down',
    );
    assert.deepEqual(Object.keys(scaled.status?.podStates ?? {}).sort(), ['web-0', 'web-1']);
    assert.equal(scaled.status?.observedGeneration, scaled.metadata?.generation);

    // 6. the StatefulSet deleted: its PPS goes (ownerReference garbage collection)
    await client().delete(STATEFULSETS, 'web', { namespace: NS });
    await waitFor(async () => (await getPps('web')) === undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: 'PersistentPodState web deleted with its StatefulSet',
    });
  });

  it('with kruise-ipam behind the bridge: the recreated pod, pinned to its node, gets its reserved IP back', async () => {
    const cri = await connectRuntime({ socket: stack.cluster.runtimeSocket, env: {} });
    const sandboxes = new Sandboxes(cri, stack.cluster);
    try {
      installTestPlugin(stack.cluster);
      await useNetwork(stack.cluster, sandboxes, 'kipam-pps', rangeOf(stack.cluster, 0xcd00, 16));
      const sts = await client().create<StatefulSetObject>(
        STATEFULSETS,
        statefulSetManifest(
          NS,
          'db',
          1,
          stack.cluster.images.busybox1,
          {
            'kruise.io/auto-generate-persistent-pod-state': 'true',
            'kruise.io/required-persistent-topology': HOSTNAME_LABEL,
          },
          { [RESERVED_IP_DURATION_ANNOTATION]: '1' },
        ),
      );
      stack.setScheduleOrder([NODE_B, NODE_A]);
      await waitForPps('db', () => true, 'PersistentPodState db generated');
      await client().create(CoreResources.pods, statefulSetPod(sts, 0), { namespace: NS });
      const first = await waitReady('db-0');
      assert.equal(first.spec?.nodeName, NODE_B);
      assert.ok(first.status?.podIP, 'db-0 has an IP');
      await waitForPps('db', (p) => p.status?.podStates?.['db-0']?.nodeName === NODE_B, 'db-0 recorded on node B');

      await deleteAndWaitGone('db-0');
      stack.setScheduleOrder([NODE_A, NODE_B]);
      const recreated = await client().create<PodObject>(CoreResources.pods, statefulSetPod(sts, 0), { namespace: NS });
      assert.deepEqual(recreated.spec?.nodeSelector, { [HOSTNAME_LABEL]: NODE_B });
      const second = await waitReady('db-0');
      assert.notEqual(second.metadata?.uid, first.metadata?.uid);
      assert.equal(second.spec?.nodeName, NODE_B);
      assert.equal(second.status?.podIP, first.status?.podIP, 'the reserved IP came back');
      await client().delete(STATEFULSETS, 'db', { namespace: NS });
      await waitFor(async () => (await getPod('db-0')) === undefined, {
        timeoutMs: 60_000,
        intervalMs: 100,
        message: 'db-0 garbage-collected with its StatefulSet',
      });
    } finally {
      await sandboxes.removeAll();
      removeTestConflist(stack.cluster);
      cri.close();
    }
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
      } as PersistentPodStateObject,
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
