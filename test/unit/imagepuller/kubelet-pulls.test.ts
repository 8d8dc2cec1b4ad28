// kubelet's pulls first (src/daemon/imagepuller/kubelet-pulls.ts): which containers kubelet has yet to start, which
// of their images are missing from the node, and a new pre-pull that waits for them (its status says why); a running
// pull under a lease (pull-leases.ts) pauses and resumes under the same lease without spending an attempt, one
// without a lease goes on. Fake clock, fake pods, images present as a set, leases as a map.
import assert from 'node:assert/strict';
import type { ImageTagStatus } from '../../../src/api/nodeimage.js';
import type { WirePod } from '../../../src/api/wire.js';
import { imagesKubeletPrepares, KubeletPulls, type PodSource } from '../../../src/daemon/imagepuller/kubelet-pulls.js';
import type { LeaseStore } from '../../../src/cri/containerd-leases.js';
import { LEASE_OF_LABEL, PullLeases } from '../../../src/daemon/imagepuller/pull-leases.js';
import { PullSecretStore } from '../../../src/daemon/imagepuller/pull-secrets.js';
import { TagPull } from '../../../src/daemon/imagepuller/tag-pull.js';
import { RunSlots } from '../../../src/daemon/run-slots.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';
import { FakeImageRuntime, secretReader } from './fakes.js';

function pod(
  name: string,
  overrides: { phase?: string; deleted?: boolean; statuses?: unknown[]; init?: string } = {},
): WirePod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      ...(overrides.deleted && { deletionTimestamp: '2026-11-29T00:00:00Z' }),
    },
    spec: {
      ...(overrides.init !== undefined && { initContainers: [{ name: 'init', image: overrides.init }] }),
      containers: [{ name: 'app', image: `app-${name}:1` }],
    },
    status: {
      ...(overrides.phase !== undefined && { phase: overrides.phase }),
      ...(overrides.statuses !== undefined && { containerStatuses: overrides.statuses }),
    },
  } as WirePod;
}

const waiting = (reason: string) => [{ name: 'app', state: { waiting: { reason } } }];

class FakePods implements PodSource {
  pods: WirePod[] = [];
  private handlers: (() => void)[] = [];
  list(): WirePod[] {
    return this.pods;
  }
  addHandlers(h: { onAdd?: () => void }): () => void {
    if (h.onAdd) this.handlers.push(h.onAdd);
    return () => undefined;
  }
  set(pods: WirePod[]): void {
    this.pods = pods;
    for (const handler of this.handlers) handler();
  }
}

describe('imagepuller: kubelet pulls first', () => {
  it('counts containers kubelet has yet to start: no status, ContainerCreating, PodInitializing; not backoff, not started, not deleted', () => {
    const prepared = imagesKubeletPrepares([
      pod('new', { phase: 'Pending' }),
      pod('creating', { phase: 'Pending', statuses: waiting('ContainerCreating') }),
      pod('init', {
        phase: 'Pending',
        init: 'init-image:1',
        statuses: waiting('PodInitializing'),
      }),
      pod('backoff', { phase: 'Pending', statuses: waiting('ImagePullBackOff') }),
      pod('errpull', { phase: 'Pending', statuses: waiting('ErrImagePull') }),
      pod('running', { phase: 'Running', statuses: [{ name: 'app', state: { running: {} } }] }),
      pod('done', { phase: 'Succeeded' }),
      pod('going', { phase: 'Pending', deleted: true }),
    ]).map((p) => `${p.pod}: ${p.image}`);
    assert.deepEqual(prepared, [
      'ns/new: app-new:1',
      'ns/creating: app-creating:1',
      'ns/init: init-image:1',
      'ns/init: app-init:1',
    ]);
  });

  it('holds while a preparing container’s image is missing, clears once the runtime has it; gives up after 10 minutes', async () => {
    const clock = new FakeClock();
    const pods = new FakePods();
    const present = new Set<string>(['app-old:1']);
    const pulls = new KubeletPulls({
      pods,
      imagePresent: (image) => Promise.resolve(present.has(image)),
      clock,
      logger: silentLogger,
    });
    try {
      pods.set([pod('old', { phase: 'Pending' }), pod('web', { phase: 'Pending' })]);
      await until(() => pulls.pulling().length === 1, "kubelet pulls web's image");
      assert.deepEqual(pulls.pulling(), ['ns/web: app-web:1']);
      let cleared = false;
      const waiter = pulls.whenClear(new AbortController().signal).then(() => (cleared = true));
      await clock.advance(1_000);
      assert.equal(cleared, false);
      present.add('app-web:1'); // kubelet's pull is done: no pod event until the container starts
      await clock.advance(1_000);
      await waiter;
      assert.deepEqual(pulls.pulling(), []);

      // a pod stuck before its pull holds pre-pulls for 10 minutes at most
      pods.set([pod('stuck', { phase: 'Pending', statuses: waiting('ContainerCreating') })]);
      await until(() => pulls.pulling().length === 1, 'the pod stuck before its pull holds');
      await clock.advance(10 * 60_000 + 1_000);
      await until(() => pulls.pulling().length === 0, 'the hold expired after 10 minutes');
      await pulls.whenClear(new AbortController().signal);
    } finally {
      pulls.stop();
    }
  });

  it('a new pre-pull waits for kubelet (Waiting, saying why); it pulls once kubelet is done', async () => {
    const clock = new FakeClock();
    const pods = new FakePods();
    const present = new Set<string>();
    const pulls = new KubeletPulls({
      pods,
      imagePresent: (image) => Promise.resolve(present.has(image)),
      clock,
      logger: silentLogger,
    });
    pods.set([pod('web', { phase: 'Pending' })]);
    await until(() => pulls.pulling().length === 1, "kubelet pulls web's image");
    const runtime = new FakeImageRuntime();
    const history: ImageTagStatus[] = [];
    const pull: TagPull = new TagPull(
      { imageName: '127.0.0.1:5000/test/busybox', tag: '1.0', version: 0 },
      {
        runtime: () => Promise.resolve(runtime),
        slots: new RunSlots(2),
        secrets: new PullSecretStore(secretReader({}).read, clock, 60_000),
        clock,
        logger: silentLogger,
        onChange: () => history.push(pull.status),
        kubeletFirst: pulls,
      },
    );
    try {
      await until(
        () => history.some((s) => s.phase === 'Waiting' && s.message !== undefined),
        'the pre-pull waits, saying why',
      );
      assert.match(
        history.at(-1)?.message ?? '',
        /^waiting for kubelet, which is pulling images for pods of this node \(ns\/web: app-web:1\)$/,
      );
      await clock.advance(5_000);
      assert.equal(runtime.pulls.length, 0, 'no pre-pull beside kubelet');
      present.add('app-web:1');
      await clock.advance(1_000);
      await until(() => pull.status.phase === 'Succeeded', 'the pre-pull succeeded once kubelet was done');
      assert.equal(runtime.pulls.length, 1);
      assert.equal(pull.status.message, undefined);
    } finally {
      pull.abort();
      pulls.stop();
    }
  });

  /** containerd's leases as a map; `made` counts creations. */
  function fakeLeases(): LeaseStore & { leases: Map<string, Record<string, string>>; made: number } {
    const leases = new Map<string, Record<string, string>>();
    return {
      leases,
      made: 0,
      create(id, labels) {
        this.made++;
        leases.set(id, labels);
        return Promise.resolve();
      },
      delete(id) {
        leases.delete(id);
        return Promise.resolve();
      },
      listLabelled(key, value) {
        return Promise.resolve([...leases].filter(([, l]) => l[key] === value).map(([id, labels]) => ({ id, labels })));
      },
    };
  }

  async function runningPull(withLeases: boolean) {
    const clock = new FakeClock();
    const pods = new FakePods();
    const present = new Set<string>();
    const pulls = new KubeletPulls({
      pods,
      imagePresent: (image) => Promise.resolve(present.has(image)),
      clock,
      logger: silentLogger,
    });
    const runtime = new FakeImageRuntime();
    const ref = '127.0.0.1:5000/test/busybox:1.0';
    runtime.script.set(ref, ['hang', { id: `sha256:${'b'.repeat(64)}` }]);
    const store = fakeLeases();
    // a lease an earlier agent left: deleted when the first lease is taken
    store.leases.set('kruise-daemon-pull-old', { [LEASE_OF_LABEL]: 'kruise-daemon' });
    const history: ImageTagStatus[] = [];
    const pull: TagPull = new TagPull(
      {
        imageName: '127.0.0.1:5000/test/busybox',
        tag: '1.0',
        version: 0,
        pullPolicy: { backoffLimit: 0, timeoutSeconds: 600 },
      },
      {
        runtime: () => Promise.resolve(runtime),
        slots: new RunSlots(2),
        secrets: new PullSecretStore(secretReader({}).read, clock, 60_000),
        clock,
        logger: silentLogger,
        onChange: () => history.push(pull.status),
        kubeletFirst: pulls,
        ...(withLeases && {
          leases: new PullLeases({ store: () => Promise.resolve(store), clock, logger: silentLogger }),
        }),
      },
    );
    await until(() => runtime.inFlight === 1 && pull.status.phase === 'Pulling', 'the pre-pull is running');
    // a pod comes whose image kubelet must pull
    pods.set([pod('web', { phase: 'Pending' })]);
    await until(() => pulls.pulling().length === 1, "kubelet pulls web's image");
    return { clock, present, runtime, store, history, pull, pulls };
  }

  it('a running pull under a lease pauses for kubelet and resumes under the same lease, spending no attempt', async () => {
    const { clock, present, runtime, store, history, pull, pulls } = await runningPull(true);
    try {
      await until(() => runtime.pulls[0]?.outcome === 'cancelled', 'the running pull cancelled for kubelet');
      await until(() => pull.status.phase === 'Waiting', 'the tag waits again');
      assert.match(pull.status.message ?? '', /^waiting for kubelet, which is pulling images for pods of this node/);
      assert.equal(runtime.inFlight, 0, 'nothing of ours pulls beside kubelet');
      assert.deepEqual([...store.leases.keys()].length, 1, "the earlier agent's lease deleted, ours kept");
      present.add('app-web:1');
      await clock.advance(1_000);
      await until(() => pull.status.phase === 'Succeeded', 'resumed and pulled once kubelet was done (backoffLimit 0)');
      assert.equal(runtime.pulls.length, 2);
      const lease = runtime.pulls[0]!.lease;
      assert.match(lease ?? '', /^kruise-daemon-pull-/);
      assert.equal(runtime.pulls[1]!.lease, lease, 'the same lease: what the first call fetched is used');
      assert.equal(store.made, 1);
      await until(() => store.leases.size === 0, 'the lease let go once the image is made');
      const phases = history.map((s) => s.phase).filter((p, i, a) => p !== a[i - 1]);
      assert.deepEqual(phases, ['Pulling', 'Waiting', 'Pulling', 'Succeeded']);
      assert.equal(pull.status.startTime, history.find((s) => s.phase === 'Pulling')?.startTime, 'one start time');
    } finally {
      pull.abort();
      pulls.stop();
    }
  });

  it('a running pull without a lease (another runtime) goes on while kubelet pulls', async () => {
    const { clock, runtime, pull, pulls } = await runningPull(false);
    try {
      await clock.advance(5_000);
      assert.equal(runtime.pulls.length, 1);
      assert.equal(runtime.pulls[0]!.outcome, undefined, 'still running');
      assert.equal(runtime.pulls[0]!.lease, undefined);
      assert.equal(pull.status.phase, 'Pulling');
    } finally {
      pull.abort();
      pulls.stop();
    }
  });
});
