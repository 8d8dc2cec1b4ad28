// Two candidates for one Lease in the real API server (a namespace of its own): one leads; when it stops (releasing the lease) the other takes over.
import assert from 'node:assert/strict';
import type { KubeClient } from '../../../src/kube/client.js';
import { KubeLeaseLock, LeaderElector, type Lease } from '../../../src/kube/leader-election.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { useRealCluster } from '../../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../../support/test-namespace.js';
import { waitFor } from '../../support/wait.js';

describe('LeaderElector against the real API server (component)', function () {
  this.timeout(120_000);
  let client: KubeClient;
  let namespace = '';

  before(async function () {
    client = (await useRealCluster()).admin;
    namespace = await createTestNamespace(client, 'kd-leader-election');
  });

  after(async () => {
    if (namespace) await deleteTestNamespace(client, namespace);
  });

  function candidate(identity: string, options: { leaseDurationMs?: number } = {}) {
    const events: string[] = [];
    const elector = new LeaderElector({
      lock: new KubeLeaseLock(client, namespace, 'kruise-controller'),
      identity,
      leaseDurationMs: options.leaseDurationMs ?? 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
      callbacks: {
        onStartedLeading: () => events.push('started'),
        onStoppedLeading: () => events.push('stopped'),
      },
    });
    const done = elector.run();
    return { elector, events, done };
  }

  async function lease(): Promise<Lease> {
    return await client.get<Lease>(CoreResources.leases, 'kruise-controller', { namespace });
  }

  it('one of two candidates leads; the other takes over after the leader stops and releases', async () => {
    const a = candidate('controller-a');
    const b = candidate('controller-b');
    const first = await waitFor(() => (a.elector.isLeader() ? a : b.elector.isLeader() ? b : undefined), {
      message: 'a leader',
    });
    const second = first === a ? b : a;
    assert.ok(!second.elector.isLeader(), 'only one leader');
    assert.equal((await lease()).spec?.holderIdentity, first.elector.identity);
    // It keeps leading across renewals.
    const renewedBefore = (await lease()).spec?.renewTime;
    await waitFor(async () => (await lease()).spec?.renewTime !== renewedBefore, { message: 'a renewal' });
    assert.ok(!second.elector.isLeader());
    const stoppedAt = Date.now();
    await first.elector.stop();
    await first.done;
    assert.deepEqual(first.events, ['started', 'stopped']);
    await waitFor(() => second.elector.isLeader(), { message: 'the second candidate to lead' });
    // Released, so the take-over took about a retry period, not a whole lease duration.
    assert.ok(Date.now() - stoppedAt < 3000, `take-over took ${Date.now() - stoppedAt} ms`);
    const l = await lease();
    assert.equal(l.spec?.holderIdentity, second.elector.identity);
    assert.equal(l.spec?.leaseTransitions, 1);
    await second.elector.stop();
  });

  it('takes over a lease its holder stopped renewing without releasing, after the lease duration', async () => {
    const a = new LeaderElector({
      lock: new KubeLeaseLock(client, namespace, 'crashed'),
      identity: 'crashy',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      releaseOnStop: false,
      callbacks: { onStartedLeading: () => undefined, onStoppedLeading: () => undefined },
    });
    void a.run();
    await waitFor(() => a.isLeader(), { message: 'first leader' });
    await a.stop();
    const gone = Date.now();
    const b = new LeaderElector({
      lock: new KubeLeaseLock(client, namespace, 'crashed'),
      identity: 'successor',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      callbacks: { onStartedLeading: () => undefined, onStoppedLeading: () => undefined },
    });
    void b.run();
    await waitFor(() => b.isLeader(), { message: 'the successor to lead' });
    assert.ok(Date.now() - gone >= 3000, 'not before the lease expired');
    await b.stop();
  });
});
