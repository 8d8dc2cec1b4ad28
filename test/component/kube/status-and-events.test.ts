// patchStatus with concurrent writers, and event aggregation, against the real API server (a namespace of its own).
import assert from 'node:assert/strict';
import { KubeClient } from '../../../src/kube/client.js';
import { EventRecorder, type CoreEvent } from '../../../src/kube/event-recorder.js';
import { kubeMetrics, type KubeMetrics } from '../../../src/kube/metrics.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { patchStatus } from '../../../src/kube/status-patch.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';
import { unscheduledPod, type Pod } from './support/objects.js';

describe('patchStatus and EventRecorder against the real API server (component)', function () {
  this.timeout(120_000);
  let cluster: RealCluster;
  let client: KubeClient;
  let metrics: KubeMetrics;
  let namespace = '';

  before(async function () {
    cluster = await useRealCluster();
    metrics = kubeMetrics(createRegistry());
    client = new KubeClient(cluster.admin.connection, {
      metrics,
      userAgent: 'kd-kube-component-test',
      timeoutMs: 30_000,
    });
    namespace = await createTestNamespace(client, 'kd-status-events');
  });

  after(async () => {
    if (namespace) await deleteTestNamespace(client, namespace);
    client?.close();
  });

  async function patchesSent(): Promise<number> {
    const values = (await metrics.apiRequests.get()).values;
    return values.filter((v) => v.labels.verb === 'patch').reduce((sum, v) => sum + v.value, 0);
  }

  it('concurrent writers each add their conditions; none is lost and unchanged status sends nothing', async () => {
    const pod = await client.create<Pod>(CoreResources.pods, unscheduledPod('writers', namespace));
    const writers = 4;
    const each = 5;
    const results = await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        let conflicts = 0;
        for (let i = 0; i < each; i++) {
          const r = await patchStatus(
            client,
            CoreResources.pods,
            pod,
            (draft) => {
              const conditions = draft.status?.conditions ?? [];
              conditions.push({ type: `example.io/w${w}-${i}`, status: 'True' });
              draft.status = { ...draft.status, conditions };
            },
            { attempts: 50 },
          );
          conflicts += r.attempts - 1;
        }
        return conflicts;
      }),
    );
    const final = await client.get<Pod>(CoreResources.pods, 'writers', { namespace });
    const types = (final.status?.conditions ?? []).map((c) => c.type).sort();
    assert.equal(types.length, writers * each, `conditions: ${types.join(',')}`);
    assert.equal(new Set(types).size, writers * each);
    assert.ok(results.reduce((a, b) => a + b, 0) > 0, 'the writers did collide and retried');
    const patchesBefore = await patchesSent();
    assert.ok(patchesBefore >= writers * each, `the client counts its patches (${patchesBefore})`);
    const same = await patchStatus(client, CoreResources.pods, final, (draft) => {
      draft.status = { ...draft.status };
    });
    assert.equal(same.patched, false);
    assert.equal(await patchesSent(), patchesBefore, 'nothing sent for an unchanged status');
  });

  it('aggregates repeats of one event into a single Event with a count', async () => {
    const pod = await client.create<Pod>(CoreResources.pods, unscheduledPod('evented', namespace));
    const recorder = new EventRecorder(client, { component: 'kruise-daemon', host: cluster.nodes[0]!.name });
    for (let i = 0; i < 5; i++)
      recorder.event(pod, 'Warning', 'PullImageFailed', 'image busybox:nope not found', CoreResources.pods);
    recorder.event(pod, 'Normal', 'PullImageSucceed', 'pulled busybox:1.36', CoreResources.pods);
    await recorder.close();
    const events = await client.list<CoreEvent>(CoreResources.events, { namespace });
    const mine = events.items.filter((e) => e.involvedObject?.name === 'evented');
    assert.equal(mine.length, 2);
    const failed = mine.find((e) => e.reason === 'PullImageFailed')!;
    assert.equal(failed.count, 5);
    assert.equal(failed.type, 'Warning');
    assert.equal(failed.involvedObject.uid, pod.metadata?.uid);
    assert.equal(failed.source.component, 'kruise-daemon');
    assert.equal(mine.find((e) => e.reason === 'PullImageSucceed')?.count, 1);
  });
});
