// emulator: injected stream faults: every watch closed at once, the event window compacted (410), an outage, a restart
// A supervised watch against the API emulator survives every way a stream can break: all streams closed, the event
// window compacted (410 → relist), a 20 s outage, a restart. In each the cache ends equal to the server's state and
// the handlers are told every change once.
import assert from 'node:assert/strict';
import { isAlreadyExists, isNotFound } from '../../../src/kube/errors.js';
import { Informer } from '../../../src/kube/informer/informer.js';
import { kubeMetrics, type KubeMetrics } from '../../../src/kube/metrics.js';
import { objectKey, type KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { waitFor } from '../../support/wait.js';
import { ChangeTracker, type Delivery } from './support/change-tracker.js';
import { startEmulator, type ApiServer } from './support/emulator.js';
import { clientFor } from './support/objects.js';

const NS = 'default';
const SELECTOR = 'app=churn';

/** Creates, updates and deletes ConfigMaps cm-<0..4>; returns each written state. */
async function churn(client: KubeClient, ops: number, seed: number): Promise<Delivery[]> {
  const written: Delivery[] = [];
  for (let i = 0; i < ops; i++) {
    const name = `cm-${(seed + i) % 5}`;
    const key = `${NS}/${name}`;
    const existing = await client
      .get<KubeObject & { data?: Record<string, string> }>(CoreResources.configMaps, name, { namespace: NS })
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    if (!existing) {
      const o = await client.create(CoreResources.configMaps, {
        metadata: { name, namespace: NS, labels: { app: 'churn' } },
        data: { n: String(i) },
      } as KubeObject);
      written.push({ type: 'add', key, rv: o.metadata!.resourceVersion! });
    } else if ((seed + i) % 3 === 0) {
      await client.delete(CoreResources.configMaps, name, { namespace: NS });
      written.push({ type: 'delete', key, rv: '' });
    } else {
      const o = await client.patch(
        CoreResources.configMaps,
        name,
        { data: { n: `${seed}-${i}` } },
        { type: 'merge', namespace: NS },
      );
      written.push({ type: 'update', key, rv: o.metadata!.resourceVersion! });
    }
  }
  // An object outside the selection never reaches the informer.
  await client
    .create(CoreResources.configMaps, { metadata: { name: `other-${seed}`, namespace: NS } })
    .catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  return written;
}

async function serverState(client: KubeClient): Promise<Map<string, string>> {
  const list = await client.listAll(CoreResources.configMaps, { namespace: NS, labelSelector: SELECTOR });
  return new Map(list.items.map((o) => [objectKey(o), o.metadata!.resourceVersion!]));
}

function cacheState(informer: Informer<KubeObject>): Map<string, string> {
  return new Map(informer.list().map((o) => [objectKey(o), o.metadata!.resourceVersion!]));
}

async function counter(metrics: KubeMetrics, name: 'relists' | 'watchRestarts', reason: string): Promise<number> {
  const values = (await metrics[name].get()).values;
  return values.filter((v) => v.labels.reason === reason).reduce((a, v) => a + v.value, 0);
}

describe('Informer against the API emulator (component)', function () {
  this.timeout(90_000);
  let emu: ApiServer;
  let client: KubeClient;
  let informer: Informer<KubeObject>;
  let tracker: ChangeTracker;
  let metrics: KubeMetrics;

  beforeEach(async () => {
    emu = await startEmulator({ bookmarkIntervalMs: 1000 });
    metrics = kubeMetrics(createRegistry(), 'test_');
    client = clientFor(emu.url, metrics);
    informer = new Informer<KubeObject>(CoreResources.configMaps, client, {
      namespace: NS,
      labelSelector: SELECTOR,
      metrics,
      idleTimeoutMs: 10_000,
      // Shorter than the 30 s default so the outage test resumes soon after the server is back.
      backoff: { initialMs: 500, maxMs: 4000 },
    });
    tracker = new ChangeTracker();
    tracker.attach(informer);
    informer.start();
    await informer.synced;
  });

  afterEach(async () => {
    await informer?.stop();
    client?.close();
    await emu?.close();
  });

  async function converged(): Promise<void> {
    const want = await serverState(client);
    await waitFor(
      () => {
        const have = cacheState(informer);
        return have.size === want.size && [...want].every(([k, rv]) => have.get(k) === rv);
      },
      { timeoutMs: 30_000, message: 'the informer cache to equal the server' },
    );
    assert.deepEqual(tracker.believed(), want, 'handlers saw the same final state');
    tracker.assertNoDuplicates();
  }

  it('resumes after the server closes every watch, without a relist', async () => {
    const written = await churn(client, 15, 0);
    await converged();
    emu.faults.closeAllWatches();
    written.push(...(await churn(client, 15, 7)));
    emu.faults.closeAllWatches();
    written.push(...(await churn(client, 10, 3)));
    await converged();
    tracker.assertDelivered(written);
    assert.equal(informer.stats().lists, 1, 'no relist');
    assert.ok(informer.stats().watches >= 3);
  });

  it('relists on 410 after compaction and hands over the difference once', async () => {
    await churn(client, 15, 0);
    await converged();
    emu.faults.compact();
    emu.faults.closeAllWatches();
    const during = await churn(client, 15, 4);
    await converged();
    assert.equal(await counter(metrics, 'relists', 'gone'), 1, 'exactly one relist');
    // Changes made after the relist (or seen by the new watch) are each delivered; the final state certainly is.
    const finalStates = await serverState(client);
    for (const [k, rv] of finalStates)
      assert.ok(
        tracker.deliveries.some((d) => d.key === k && d.rv === rv),
        `${k}@${rv}`,
      );
    assert.ok(during.length > 0);
  });

  it('survives a 20 s outage and resumes from its resourceVersion', async () => {
    const written = await churn(client, 10, 1);
    await converged();
    const watchesBefore = informer.stats().watches;
    await emu.stop();
    const down = Date.now();
    // The outage lasts 20 s by the wall clock, and the informer keeps trying (backing off) meanwhile.
    await waitFor(() => Date.now() - down >= 20_000 && informer.stats().watches >= watchesBefore + 3, {
      timeoutMs: 40_000,
      intervalMs: 250,
      message: 'a 20 s outage with reconnect attempts',
    });
    await emu.start();
    written.push(...(await churn(client, 10, 2)));
    await converged();
    tracker.assertDelivered(written);
    assert.equal(informer.stats().lists, 1, 'no relist after an outage');
    assert.ok((await counter(metrics, 'watchRestarts', 'error')) >= 3);
  });

  it('survives a server restart', async () => {
    const written = await churn(client, 10, 2);
    await converged();
    await emu.restart();
    written.push(...(await churn(client, 10, 5)));
    await converged();
    tracker.assertDelivered(written);
    assert.equal(informer.stats().lists, 1, 'no relist after a restart');
  });

  it('a field selector narrows what the informer sees', async () => {
    await churn(client, 5, 0);
    const one = new Informer<KubeObject>(CoreResources.configMaps, client, {
      namespace: NS,
      fieldSelector: 'metadata.name=cm-1',
    });
    const seen: string[] = [];
    one.addHandlers({ onAdd: (o) => seen.push(o.metadata!.name!), onUpdate: (_a, o) => seen.push(o.metadata!.name!) });
    one.start();
    try {
      await one.synced;
      await client
        .patch(CoreResources.configMaps, 'cm-1', { data: { n: 'again' } }, { type: 'merge', namespace: NS })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      await client
        .patch(CoreResources.configMaps, 'cm-2', { data: { n: 'again' } }, { type: 'merge', namespace: NS })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      await converged();
      assert.ok(seen.length >= 1);
      assert.ok(
        seen.every((n) => n === 'cm-1'),
        `only cm-1, saw ${seen.join(',')}`,
      );
    } finally {
      await one.stop();
    }
  });
});
