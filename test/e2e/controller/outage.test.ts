// A controller outage never blocks pods that use none of our features, on the real API server: the controller
// registers its webhooks and then dies (they stay registered, pointing at a port nobody serves). A plain pod, a
// multi-container pod without a launch order and a StatefulSet's pod (mpod-persistentpodstate.kb.io is Ignore) are
// admitted; a pod that asks for a launch order (annotation or env) is refused (mpod.kb.io is Fail: it must not start
// unordered). With the controller back, the same pod is admitted with its barrier env: the conditions send it there.
import assert from 'node:assert/strict';
import {
  CONTAINER_LAUNCH_BARRIER_ENV,
  CONTAINER_LAUNCH_ORDERED,
  CONTAINER_LAUNCH_PRIORITY_ANNOTATION,
  CONTAINER_LAUNCH_PRIORITY_ENV,
} from '../../../src/api/constants.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { MUTATING_WEBHOOK_CONFIGURATIONS } from '../../../src/controller/resources.js';
import {
  MUTATING_CONFIGURATION_NAME,
  type WebhookConfiguration,
} from '../../../src/controller/admission/configurations.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';
import { waitFor } from '../../support/wait.js';

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
}

interface Pod extends KubeObject {
  spec: { containers: Container[]; nodeName?: string };
}

describe('controller outage: only pods that use our features wait for it (webhook matchConditions)', function () {
  this.timeout(240_000);
  let cluster: RealCluster;
  let system: RealSystem | undefined;
  let namespace: string;

  const container = (name: string, env?: Container['env']): Container => ({
    name,
    image: cluster.images.busybox1,
    ...(env ? { env } : {}),
  });

  function pod(name: string, containers: Container[], metadata: Partial<KubeObject['metadata']> = {}): Pod {
    return { metadata: { name, namespace, ...metadata }, spec: { containers } };
  }

  const ordered = (name: string): Pod =>
    pod(name, [container('a'), container('b')], {
      annotations: { [CONTAINER_LAUNCH_PRIORITY_ANNOTATION]: CONTAINER_LAUNCH_ORDERED },
    });
  const byEnv = (name: string): Pod =>
    pod(name, [container('a', [{ name: CONTAINER_LAUNCH_PRIORITY_ENV, value: '1' }]), container('b')]);

  /** Create through the whole admission chain without storing (webhooks with sideEffects None are called). */
  const admit = (p: Pod): Promise<Pod> => cluster.admin.create<Pod>(CoreResources.pods, p, { namespace, dryRun: true });

  const barrierEnvs = (p: Pod): number =>
    p.spec.containers.filter((c) => c.env?.some((e) => e.name === CONTAINER_LAUNCH_BARRIER_ENV)).length;

  before(async () => {
    cluster = await useRealCluster();
    namespace = await createTestNamespace(cluster.admin, 'e2e-outage', { forPods: true });
    system = await startSystem(cluster, { nodes: [] });
    // the webhooks are there and the controller answers: an ordered pod gets its barriers (once the configurations
    // the controller wrote as it started have reached the API server's webhook cache: a CI run's first dry run came
    // before them and got none)
    const injected = await waitFor(
      async () => {
        const n = barrierEnvs(await admit(ordered('before-outage')));
        return n > 0 ? n : undefined;
      },
      { timeoutMs: 30_000, message: 'an ordered pod admitted with barriers before the outage' },
    );
    assert.equal(injected, 2);
    await system.controller!.kill(); // an outage: no clean stop, its webhook configurations stay registered
  });

  after(async () => {
    await system?.stop();
    if (cluster && namespace) await deleteTestNamespace(cluster.admin, namespace);
  });

  it('keeps the pod webhooks registered with their conditions while nobody answers', async () => {
    const config = await cluster.admin.get<WebhookConfiguration>(
      MUTATING_WEBHOOK_CONFIGURATIONS,
      MUTATING_CONFIGURATION_NAME,
    );
    const hook = (name: string) => config.webhooks?.find((h) => h.name === name);
    assert.equal(hook('mpod.kb.io')?.failurePolicy, 'Fail');
    assert.ok(hook('mpod.kb.io')?.matchConditions?.length);
    assert.equal(hook('mpod-persistentpodstate.kb.io')?.failurePolicy, 'Ignore');
    assert.ok(hook('mpod-persistentpodstate.kb.io')?.matchConditions?.length);
  });

  it('admits pods that use none of our features (created for real, and a multi-container one)', async () => {
    const plain = await cluster.admin.create<Pod>(CoreResources.pods, pod('plain', [container('a')]), { namespace });
    assert.equal(plain.metadata?.name, 'plain');
    const two = await admit(pod('two-containers', [container('a'), container('b', [{ name: 'X', value: '1' }])]));
    assert.equal(barrierEnvs(two), 0);
    // one container asking for a priority has nothing to be ordered against: not sent, admitted
    const single = await admit(pod('single', [container('a', [{ name: CONTAINER_LAUNCH_PRIORITY_ENV, value: '1' }])]));
    assert.equal(barrierEnvs(single), 0);
  });

  it("admits a StatefulSet's pod (the PersistentPodState pod webhook is Ignore), unpinned", async () => {
    const admitted = await admit(
      pod('web-0', [container('a')], {
        labels: { 'statefulset.kubernetes.io/pod-name': 'web-0' },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            name: 'web',
            uid: '00000000-0000-0000-0000-000000000001',
            controller: true,
          },
        ],
      }),
    );
    assert.equal(admitted.metadata?.name, 'web-0');
  });

  it('refuses a pod that asks for a launch order, by annotation or by env (mpod.kb.io is Fail)', async () => {
    for (const p of [ordered('ordered'), byEnv('by-env')]) {
      await assert.rejects(admit(p), (err: unknown) => {
        assert.match(String(err), /failed calling webhook "mpod\.kb\.io"/, `${p.metadata?.name}: ${String(err)}`);
        return true;
      });
    }
  });

  it('admits it, with its barriers, once the controller is back', async () => {
    await system!.startController();
    // the new controller serves on a new address and writes it (and its CA) into the webhook configurations as it
    // starts; until that write reaches the API server's webhook cache, calls still go to the dead one
    const admitted = (p: Pod): Promise<Pod> =>
      waitFor(() => admit(p), {
        timeoutMs: 30_000,
        message: `${p.metadata?.name} admitted by the restarted controller`,
      });
    assert.equal(barrierEnvs(await admitted(ordered('ordered'))), 2);
    assert.equal(barrierEnvs(await admitted(byEnv('by-env'))), 2);
  });
});
