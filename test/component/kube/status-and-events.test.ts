// patchStatus with concurrent writers, and event aggregation, against the API emulator.
import assert from 'node:assert/strict';
import type { KubeClient } from '../../../src/kube/client.js';
import { EventRecorder, type CoreEvent } from '../../../src/kube/event-recorder.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { patchStatus } from '../../../src/kube/status-patch.js';
import { startEmulator, type ApiServer } from './support/emulator.js';
import { clientFor, podFor, type Pod } from './support/objects.js';

describe('patchStatus and EventRecorder against the API emulator (component)', function () {
  this.timeout(60_000);
  let emu: ApiServer;
  let client: KubeClient;

  before(async function () {
    emu = await startEmulator();
    client = clientFor(emu.url);
  });

  after(async () => {
    client?.close();
    await emu?.close();
  });

  it('concurrent writers each add their conditions; none is lost and unchanged status sends nothing', async () => {
    const pod = await client.create<Pod>(CoreResources.pods, podFor('writers', 'kd-node-1'));
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
    const final = await client.get<Pod>(CoreResources.pods, 'writers', { namespace: 'default' });
    const types = (final.status?.conditions ?? []).map((c) => c.type).sort();
    assert.equal(types.length, writers * each, `conditions: ${types.join(',')}`);
    assert.equal(new Set(types).size, writers * each);
    assert.ok(results.reduce((a, b) => a + b, 0) > 0, 'the writers did collide and retried');
    const patchesBefore = emu.requestCount({ method: 'PATCH' });
    const same = await patchStatus(client, CoreResources.pods, final, (draft) => {
      draft.status = { ...draft.status };
    });
    assert.equal(same.patched, false);
    assert.equal(emu.requestCount({ method: 'PATCH' }), patchesBefore, 'nothing sent for an unchanged status');
  });

  it('aggregates repeats of one event into a single Event with a count', async () => {
    const pod = await client.create<Pod>(CoreResources.pods, podFor('evented', 'kd-node-1'));
    const recorder = new EventRecorder(client, { component: 'kruise-daemon', host: 'kd-node-1' });
    for (let i = 0; i < 5; i++)
      recorder.event(pod, 'Warning', 'PullImageFailed', 'image busybox:nope not found', CoreResources.pods);
    recorder.event(pod, 'Normal', 'PullImageSucceed', 'pulled busybox:1.36', CoreResources.pods);
    await recorder.close();
    const events = await client.list<CoreEvent>(CoreResources.events, { namespace: 'default' });
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
