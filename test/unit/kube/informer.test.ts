import assert from 'node:assert/strict';
import { Informer } from '../../../src/kube/informer/informer.js';
import { byLabel, byNamespace } from '../../../src/kube/informer/store.js';
import { kubeMetrics, type KubeMetrics } from '../../../src/kube/metrics.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';
import { FakeListWatcher, gone, serverError } from './support/fake-list-watcher.js';

function record(informer: Informer<KubeObject>): string[] {
  const log: string[] = [];
  informer.addHandlers({
    onAdd: (o) => log.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
    onUpdate: (a, b) =>
      log.push(`update ${b.metadata?.name}@${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    onDelete: (o) => log.push(`delete ${o.metadata?.name}`),
  });
  return log;
}

function setup(options: { idleTimeoutMs?: number } = {}) {
  const clock = new FakeClock(0);
  const lw = new FakeListWatcher();
  const registry = createRegistry();
  const metrics = kubeMetrics(registry, 'test_');
  const informer = new Informer<KubeObject>(CoreResources.pods, lw, {
    clock,
    metrics,
    random: () => 0,
    indexers: { namespace: byNamespace, app: byLabel('app') },
    ...options,
  });
  return { clock, lw, informer, metrics, log: record(informer) };
}

/** Wait until the informer has opened its `n`th watch. */
async function watching(lw: FakeListWatcher, n = 1): Promise<void> {
  await until(() => lw.watches.length === n, `watch ${n} opened`);
}

/** Wait until the informer has taken in every change up to `rv` (an event's or a bookmark's resourceVersion). */
async function caughtUp(informer: Informer<KubeObject>, rv: string | number): Promise<void> {
  await until(() => informer.resourceVersion === String(rv), `the informer at resourceVersion ${rv}`);
}

/** Watches ended for `reason`, as the informer counts them (before it backs off or reopens). */
async function restarts(metrics: KubeMetrics, reason: string): Promise<number | undefined> {
  return (await metrics.watchRestarts.get()).values.find((v) => v.labels.reason === reason)?.value;
}

/** Wait until the first list has failed (the informer then backs off). */
async function listFailed(informer: Informer<KubeObject>): Promise<void> {
  await until(() => /the last list failed/.test(informer.notSyncedReason() ?? ''), 'the first list failed');
}

describe('Informer', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  it('lists, syncs, then watches with bookmarks from the list resourceVersion', async () => {
    const { lw, informer, log } = setup();
    lw.upsert('a');
    lw.upsert('b');
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    assert.ok(informer.hasSynced());
    assert.deepEqual(log, ['add a@101', 'add b@102']);
    assert.equal(lw.lists[0]!.resourceVersion, '0', 'first list may be served from the cache');
    await watching(lw);
    assert.equal(lw.current.opts.resourceVersion, '102');
    assert.equal(lw.current.opts.allowWatchBookmarks, true);
    assert.ok(lw.current.opts.timeoutSeconds! >= 300 && lw.current.opts.timeoutSeconds! <= 600);
  });

  it('applies events, ignores a repeated resourceVersion, and follows bookmarks', async () => {
    const { lw, informer, log } = setup();
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    await watching(lw);
    const added = lw.upsert('a', { labels: { app: 'web' } });
    lw.current.push(added);
    lw.current.push(added);
    lw.current.push(lw.upsert('a', { labels: { app: 'db' } }));
    lw.current.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '150' } } });
    await caughtUp(informer, 150);
    assert.deepEqual(log, ['add a@101', 'update a@101->102']);
    assert.equal(informer.resourceVersion, '150');
    assert.deepEqual(
      informer.store.byIndex('app', 'db').map((o) => o.metadata?.name),
      ['a'],
    );
    assert.deepEqual(informer.store.byIndex('app', 'web'), []);
    assert.equal(informer.store.byIndex('namespace', 'ns').length, 1);
    lw.current.push(lw.remove('a'));
    await caughtUp(informer, lw.rv);
    assert.deepEqual(log.slice(2), ['delete a']);
    assert.equal(informer.store.size, 0);
  });

  it('a stream that ends at once with nothing in it backs off instead of spinning', async () => {
    const { clock, lw, informer, metrics } = setup();
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    await watching(lw);
    lw.current.end();
    await until(async () => (await restarts(metrics, 'closed')) === 1, 'the informer saw the stream end');
    assert.equal(lw.watches.length, 1);
    await clock.advance(1000);
    assert.equal(lw.watches.length, 2);
  });

  it('a closed stream resumes from the last resourceVersion without a relist', async () => {
    const { clock, lw, informer, metrics } = setup();
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    await watching(lw);
    lw.current.push(lw.upsert('a'));
    await caughtUp(informer, lw.rv);
    for (let i = 0; i < 3; i++) {
      await clock.advance(1000);
      lw.current.end();
      await watching(lw, i + 2);
    }
    assert.equal(lw.lists.length, 1);
    assert.equal(lw.watches.length, 4);
    assert.ok(lw.watches.slice(1).every((w) => w.opts.resourceVersion === '101'));
    assert.equal(await restarts(metrics, 'closed'), 3);
  });

  it('410 Gone relists and hands over the difference once', async () => {
    const { lw, informer, log, metrics } = setup();
    lw.upsert('keep');
    lw.upsert('change');
    lw.upsert('drop');
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    await watching(lw);
    // Changes the informer misses while its watch is broken:
    lw.upsert('change');
    lw.remove('drop');
    lw.upsert('new');
    lw.current.fail(gone());
    await watching(lw, 2);
    assert.equal(lw.lists.length, 2);
    assert.equal(lw.lists[1]!.resourceVersion, undefined, 'after 410 the list is a fresh consistent read');
    assert.deepEqual(log.slice(3).sort(), ['add new@106', 'delete drop', 'update change@102->104']);
    assert.equal(lw.current.opts.resourceVersion, '106');
    const relists = (await metrics.relists.get()).values.map((v) => [v.labels.reason, v.value]);
    assert.deepEqual(relists.sort(), [
      ['gone', 1],
      ['initial', 1],
    ]);
  });

  it('other watch failures back off 1 s, 2 s, 4 s and never relist', async () => {
    const { clock, lw, informer } = setup();
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    await watching(lw);
    lw.watchErrors = [serverError(), serverError(), serverError()];
    const openedAt: number[] = [];
    const before = lw.watches.length;
    lw.current.fail(serverError());
    for (let t = 0; t < 20_000; t += 100) {
      await clock.advance(100);
      while (openedAt.length < lw.watches.length - before) openedAt.push(clock.now());
    }
    assert.equal(lw.lists.length, 1);
    assert.equal(lw.watches.length - before, 1, 'one stream opened after the failures');
    // failure of the open stream, then three refused opens: waits 1, 2, 4, 8 s before the next open.
    assert.ok(openedAt[0]! >= 15_000 && openedAt[0]! <= 15_100, `opened at ${openedAt[0]}`);
  });

  it('an idle stream is reopened from the same resourceVersion', async () => {
    const { clock, lw, informer } = setup({ idleTimeoutMs: 60_000 });
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    await watching(lw);
    await clock.advance(30_000);
    lw.current.push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '120' } } });
    await clock.advance(59_000);
    assert.equal(lw.watches.length, 1, 'events and bookmarks keep it alive');
    await clock.advance(1_000);
    await watching(lw, 2);
    assert.equal(lw.watches.length, 2);
    assert.ok(lw.watches[0]!.closed);
    assert.equal(lw.current.opts.resourceVersion, '120');
    assert.equal(lw.lists.length, 1);
  });

  it('a failed first list backs off and retries; handlers added late get the cache replayed', async () => {
    const { clock, lw, informer } = setup();
    lw.upsert('a');
    lw.listErrors = [serverError()];
    informer.start();
    stop = () => informer.stop();
    await listFailed(informer);
    assert.equal(informer.hasSynced(), false);
    await clock.advance(1000);
    await informer.synced;
    const late: string[] = [];
    informer.addHandlers({ onAdd: (o) => late.push(o.metadata!.name!) });
    assert.deepEqual(late, ['a']);
  });

  it('until it has synced, says why: the error of the last failed list (a 403 of RBAC, a 404 without the CRD)', async () => {
    const { clock, lw, informer } = setup();
    lw.upsert('a');
    lw.listErrors = [serverError()];
    assert.equal(informer.notSyncedReason(), 'has not synced yet', 'before the first list');
    informer.start();
    stop = () => informer.stop();
    await listFailed(informer);
    assert.match(informer.notSyncedReason() ?? '', /^has not synced yet; the last list failed: .*500/);
    await clock.advance(1000);
    await informer.synced;
    assert.equal(informer.notSyncedReason(), undefined);
  });

  it('a throwing handler does not stop the others', async () => {
    const { lw, informer, log } = setup();
    informer.addHandlers({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    lw.upsert('a');
    informer.start();
    stop = () => informer.stop();
    await informer.synced;
    assert.deepEqual(log, ['add a@101']);
  });

  it('synced rejects when stopped before syncing', async () => {
    const { lw, informer } = setup();
    lw.listErrors = [serverError()];
    informer.start();
    await listFailed(informer);
    await informer.stop();
    await assert.rejects(informer.synced, /stopped before it synced/);
  });
});
