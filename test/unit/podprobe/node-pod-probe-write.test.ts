// The NodePodProbe spec write: from the cache when it is current (no read), a conflict redone at once from a fresh
// read, further conflicts after a backoff on the clock, a run of conflicts past the attempts thrown.
import assert from 'node:assert/strict';
import { NODE_POD_PROBES, type NodePodProbe } from '../../../src/api/nodepodprobe.js';
import { writeNodePodProbeSpec } from '../../../src/controller/shared/node-pod-probe-write.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { isConflict } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ResourceType } from '../../../src/kube/resource.js';
import { FakeApi } from './support.js';
import { FakeClock } from '../../../src/util/clock.js';
import { waitFor } from '../../support/wait.js';

/** A FakeApi whose next `n` updates answer 409 (someone else wrote first). */
function conflicting(n: number): FakeApi {
  const api = new FakeApi();
  const update = api.update.bind(api);
  let left = n;
  api.update = <T extends KubeObject>(rt: ResourceType, obj: T, opts = {}): Promise<T> => {
    if (left-- > 0) {
      const current = api.read<NodePodProbe>(NODE_POD_PROBES, obj.metadata?.name ?? '')!;
      api.put(NODE_POD_PROBES, current); // a new resourceVersion
    }
    return update(rt, obj, opts);
  };
  return api;
}

const addLabel = (draft: NodePodProbe): boolean => {
  if (draft.metadata.labels?.x) return false;
  draft.metadata.labels = { x: 'y' };
  return true;
};

describe('NodePodProbe spec write', () => {
  it('writes the cached object with its resourceVersion and reads nothing when the cache is current', async () => {
    const api = new FakeApi();
    const cached = api.put<NodePodProbe>(NODE_POD_PROBES, { metadata: { name: 'n' }, spec: {} });
    const result = await writeNodePodProbeSpec(api as unknown as KubeClient, new FakeClock(), cached, true, addLabel);
    assert.deepEqual([result.written, result.conflicts], [true, 0]);
    assert.deepEqual(
      api.writes.map((w) => w.verb),
      ['update'],
    );
    const unchanged = await writeNodePodProbeSpec(
      api as unknown as KubeClient,
      new FakeClock(),
      result.object!,
      true,
      addLabel,
    );
    assert.equal(unchanged.written, false);
    assert.equal(api.writes.length, 1);
  });

  it('redoes the first conflict at once and the next ones after a backoff', async () => {
    const api = conflicting(3);
    const clock = new FakeClock();
    const cached = api.put<NodePodProbe>(NODE_POD_PROBES, { metadata: { name: 'n' }, spec: {} });
    let done: Awaited<ReturnType<typeof writeNodePodProbeSpec>> | undefined;
    void writeNodePodProbeSpec(api as unknown as KubeClient, clock, cached, true, addLabel).then((r) => (done = r));
    await waitFor(() => clock.pendingTimers() > 0, { intervalMs: 0 });
    assert.equal(done, undefined, 'waits on the clock after the second conflict');
    await clock.advance(10);
    await waitFor(() => clock.pendingTimers() > 0 || done, { intervalMs: 0 });
    await clock.advance(20);
    const result = await waitFor(() => done, { intervalMs: 0 });
    assert.deepEqual([result.written, result.conflicts], [true, 3]);
    assert.equal(api.read<NodePodProbe>(NODE_POD_PROBES, 'n')?.metadata.labels?.x, 'y');
  });

  it('throws the conflict after five attempts', async () => {
    const api = conflicting(100);
    const clock = new FakeClock();
    const cached = api.put<NodePodProbe>(NODE_POD_PROBES, { metadata: { name: 'n' }, spec: {} });
    let error: unknown;
    void writeNodePodProbeSpec(api as unknown as KubeClient, clock, cached, true, addLabel).catch(
      (e: unknown) => (error = e),
    );
    for (let i = 0; i < 10 && !error; i++) await clock.advance(1000);
    await waitFor(() => error, { intervalMs: 0 });
    assert.ok(isConflict(error));
    assert.equal(api.writesOf('nodepodprobes', 'update').length, 5);
  });
});
