import assert from 'node:assert/strict';
import { EventRecorder, type CoreEvent, type EventSink } from '../../../src/kube/event-recorder.js';
import { ApiError } from '../../../src/kube/errors.js';
import { kubeMetrics } from '../../../src/kube/metrics.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';

class FakeSink {
  readonly events = new Map<string, CoreEvent>();
  readonly calls: string[] = [];
  failCreate = 0;
  slow?: Promise<void>;

  sink(): EventSink {
    return {
      create: (async (_rt: unknown, obj: CoreEvent) => {
        await this.slow;
        this.calls.push('create');
        if (this.failCreate-- > 0) throw new Error('connection reset');
        this.events.set(obj.metadata!.name!, structuredClone(obj));
        return obj;
      }) as EventSink['create'],
      patch: ((_rt: unknown, name: string, patch: Partial<CoreEvent>) => {
        this.calls.push('patch');
        const e = this.events.get(name);
        if (!e) return Promise.reject(new ApiError({ code: 404, reason: 'NotFound', message: 'gone' }, 'PATCH', name));
        Object.assign(e, patch);
        return Promise.resolve(e);
      }) as EventSink['patch'],
    };
  }
}

const pod = { metadata: { name: 'p1', namespace: 'ns', uid: 'u1', resourceVersion: '4' } };

describe('EventRecorder', () => {
  it('creates an Event about the object and aggregates repeats into count and lastTimestamp', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const fake = new FakeSink();
    const r = new EventRecorder(fake.sink(), { component: 'kruise-daemon', host: 'node-1', clock });
    r.event(pod, 'Normal', 'PullImageSucceed', 'pulled busybox', CoreResources.pods);
    await clock.advance(5000);
    r.event(pod, 'Normal', 'PullImageSucceed', 'pulled busybox', CoreResources.pods);
    r.event(pod, 'Normal', 'PullImageSucceed', 'pulled busybox', CoreResources.pods);
    r.event(pod, 'Warning', 'PullImageFailed', 'no such image', CoreResources.pods);
    await r.flush();
    assert.deepEqual(fake.calls, ['create', 'patch', 'patch', 'create']);
    const [agg, other] = [...fake.events.values()];
    assert.equal(agg!.count, 3);
    assert.equal(agg!.firstTimestamp, '2024-01-01T00:00:00Z');
    assert.equal(agg!.lastTimestamp, '2024-01-01T00:00:05Z');
    assert.deepEqual(agg!.involvedObject, {
      apiVersion: 'v1',
      kind: 'Pod',
      name: 'p1',
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '4',
    });
    assert.equal(agg!.metadata?.namespace, 'ns');
    assert.match(agg!.metadata.name!, /^p1\.[0-9a-f]+$/);
    assert.deepEqual(agg!.source, { component: 'kruise-daemon', host: 'node-1' });
    assert.equal(other!.type, 'Warning');
  });

  it('starts a new Event when the aggregated one is gone', async () => {
    const fake = new FakeSink();
    const r = new EventRecorder(fake.sink(), { component: 'c', clock: new FakeClock() });
    r.event(pod, 'Normal', 'Reason', 'm', CoreResources.pods);
    await r.flush();
    fake.events.clear();
    r.event(pod, 'Normal', 'Reason', 'm', CoreResources.pods);
    await r.flush();
    assert.deepEqual(fake.calls, ['create', 'patch', 'create']);
    assert.equal([...fake.events.values()][0]!.count, 1);
  });

  it('returns at once, never throws, filters spam per object and counts drops', async () => {
    const clock = new FakeClock();
    const fake = new FakeSink();
    let release!: () => void;
    fake.slow = new Promise((r) => (release = r));
    const registry = createRegistry();
    const metrics = kubeMetrics(registry, 'test_');
    const r = new EventRecorder(fake.sink(), { component: 'c', clock, metrics, spamBurst: 3, bufferSize: 100 });
    for (let i = 0; i < 5; i++) r.event(pod, 'Normal', 'Tick', `n${i}`, CoreResources.pods);
    r.event({ metadata: { name: 'x' } }, 'Normal', 'NoKind', 'm');
    r.event(pod, 'Normal', 'not a reason', 'm', CoreResources.pods);
    assert.equal(fake.calls.length, 0, 'nothing sent synchronously');
    release();
    await r.flush();
    assert.equal(fake.calls.length, 3, 'burst of 3 per object');
    const dropped = Object.fromEntries(
      (await metrics.eventsDropped.get()).values.map((v) => [v.labels.reason, v.value]),
    );
    assert.deepEqual(dropped, { spam: 2, invalid: 2 });
    await clock.advance(300_000);
    r.event(pod, 'Normal', 'Tick', 'later', CoreResources.pods);
    await r.flush();
    assert.equal(fake.calls.length, 4, 'the bucket refills over time');
  });

  it('retries a transient failure, then gives up quietly', async () => {
    const clock = new FakeClock();
    const fake = new FakeSink();
    fake.failCreate = 1;
    const r = new EventRecorder(fake.sink(), { component: 'c', clock, attempts: 2 });
    r.event(pod, 'Normal', 'Reason', 'm', CoreResources.pods);
    await clock.advance(1000);
    await r.flush();
    assert.deepEqual(fake.calls, ['create', 'create']);
    assert.equal(fake.events.size, 1);
    fake.failCreate = 5;
    r.event(pod, 'Normal', 'Other', 'm', CoreResources.pods);
    await clock.advance(1000);
    await r.flush();
    assert.equal(fake.events.size, 1);
  });
});
