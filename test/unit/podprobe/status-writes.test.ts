// The agent's NodePodProbe status: bounded whatever the spec holds (messages cut to a share, then dropped, then the
// last pods' entries), and a status write that keeps failing made visible: the nodePodProbeStatusWrites readiness
// check fails with the cause, the failures metric says how many and what kind, a Warning event goes on the
// NodePodProbe once per cause, and all of it clears at the next write that succeeds.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { NODE_POD_PROBES, type NodePodProbe, type NodePodProbeStatus } from '../../../src/api/nodepodprobe.js';
import {
  EVENT_STATUS_WRITE_FAILED,
  PodProbeController,
  STATUS_WRITE_FAILING_AFTER,
  statusWriteFailureKind,
} from '../../../src/daemon/podprobe/controller.js';
import { podProbeMetrics } from '../../../src/daemon/podprobe/metrics.js';
import { boundStatus, CUT_MARK } from '../../../src/daemon/podprobe/status-budget.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/index.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { FakeClock } from '../../../src/util/clock.js';
import { startEmulatorWithCrds, type EmulatorWithCrds } from '../../support/emulator-with-crds.js';
import { waitFor } from '../../support/wait.js';
import { FakeContainerRuntime } from '../containerrecreate/fake-runtime.js';

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

function status(pods: number, probes: number, message: string): NodePodProbeStatus {
  return {
    podProbeStatuses: Array.from({ length: pods }, (_, i) => ({
      name: `pod-${i}`,
      namespace: 'ns',
      uid: `uid-${i}`,
      probeStates: Array.from({ length: probes }, (_, j) => ({
        name: `m#p${j}`,
        state: 'Failed' as const,
        lastProbeTime: '2026-01-01T00:00:00Z',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        message,
      })),
    })),
  };
}

const tooLarge = (): ApiError =>
  new ApiError(
    { code: 500, reason: 'InternalError', message: 'etcdserver: request is too large' },
    'PATCH',
    '/apis/apps.kruise.io/v1alpha1/nodepodprobes/n/status',
  );

describe('NodePodProbe status budget', () => {
  it('leaves a status within its budget as it is', () => {
    const s = status(3, 2, 'down');
    assert.deepEqual(boundStatus(s, 10_000), { status: s, cut: 'none', podsLeftOut: 0 });
  });

  it('cuts every message to an equal share, marked, and the result fits', () => {
    const s = status(10, 4, 'x'.repeat(1000));
    const budget = bytes(status(10, 4, '')) + 40 * 200;
    const b = boundStatus(s, budget);
    assert.equal(b.cut, 'messages');
    assert.ok(bytes(b.status) <= budget, `${bytes(b.status)} > ${budget}`);
    const message = b.status.podProbeStatuses![9]!.probeStates![3]!.message!;
    assert.ok(message.endsWith(CUT_MARK) && message.length > 16 && message.length < 200, message);
    assert.deepEqual(boundStatus(s, budget), b, 'the same inputs, the same status: no needless writes');
  });

  it('drops messages when no share is worth keeping, then the last pods when even that is too much', () => {
    const s = status(10, 4, 'x'.repeat(1000));
    const bare = bytes(boundStatus(s, bytes(status(10, 4, '')) + 40).status);
    const noMessages = boundStatus(s, bare + 40);
    assert.equal(noMessages.cut, 'no-messages');
    assert.ok(noMessages.status.podProbeStatuses!.every((p) => p.probeStates!.every((x) => x.message === undefined)));
    const pods = boundStatus(s, Math.floor(bare / 2));
    assert.equal(pods.cut, 'pods');
    assert.equal(pods.podsLeftOut + pods.status.podProbeStatuses!.length, 10);
    assert.ok(pods.podsLeftOut > 0 && bytes(pods.status) <= bare / 2);
    assert.equal(pods.status.podProbeStatuses![0]!.name, 'pod-0', 'the first pods kept');
  });

  it('tells the kinds of failure apart', () => {
    assert.equal(statusWriteFailureKind(tooLarge()), 'too_large');
    const api = (code: number): ApiError => new ApiError({ code, reason: 'x', message: 'm' }, 'PATCH', '/x');
    assert.equal(statusWriteFailureKind(api(413)), 'too_large');
    assert.equal(statusWriteFailureKind(api(422)), 'invalid');
    assert.equal(statusWriteFailureKind(api(403)), 'forbidden');
    assert.equal(statusWriteFailureKind(api(503)), 'server_error');
    assert.equal(statusWriteFailureKind(new Error('socket hang up')), 'other');
  });
});

class RecordedEvents {
  readonly events: { kind: string; name: string; type: string; reason: string; message: string }[] = [];
  event(obj: KubeObject, type: string, reason: string, message: string): void {
    this.events.push({ kind: obj.kind ?? '', name: obj.metadata?.name ?? '', type, reason, message });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('podprobe controller: failing status writes (emulator + fake runtime)', function () {
  let env: EmulatorWithCrds;
  let controller: PodProbeController | undefined;

  before(async () => {
    env = await startEmulatorWithCrds();
  });
  after(async () => {
    await env.close();
  });
  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
  });

  it('fails the readiness check with the cause after repeated failures, counts them, sends one event, and recovers', async () => {
    const node = 'status-write-node';
    const clock = new FakeClock();
    const runtime = new FakeContainerRuntime();
    runtime.execResult = () => Promise.resolve({ exit: 0, stdout: 'up' });
    runtime.add('uid-0', 'main').startedNs = BigInt(clock.now() - 60_000) * 1_000_000n;
    await env.client.create<NodePodProbe>(NODE_POD_PROBES, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'NodePodProbe',
      metadata: { name: node },
      spec: {
        podProbes: [
          {
            name: 'pod-0',
            namespace: 'ns',
            uid: 'uid-0',
            probes: [
              { name: 'm#p', containerName: 'main', probe: { exec: { command: ['check'] }, periodSeconds: 10 } },
            ],
          },
        ],
      },
    });
    // the API server as it answered in the attack: every status patch refused by etcd
    let refuse = true;
    let refused = 0;
    const client = new Proxy(env.client, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (key !== 'patch' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const opts = args[3] as { subresource?: string } | undefined;
          if (refuse && opts?.subresource === 'status') {
            refused++;
            return Promise.reject(tooLarge());
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const events = new RecordedEvents();
    const registry = new Registry();
    controller = new PodProbeController({
      nodeName: node,
      client,
      runtime: () => Promise.resolve(runtime),
      clock,
      logger: silentLogger,
      metrics: podProbeMetrics(registry),
      statusWindowMs: 1000,
      random: () => 0,
      events,
    });
    controller.start();
    const c = controller;
    await waitFor(() => c.workerCount === 1, { message: 'the worker' });
    assert.doesNotThrow(c.checkStatusWrites, 'nothing failed yet');
    // the first write, then retries with backoff (1 s, 2 s, 4 s ...) until the check fails
    for (let i = 0; i < 20 && refused < STATUS_WRITE_FAILING_AFTER; i++) {
      await clock.advance(1000);
      await waitFor(() => true);
    }
    await waitFor(() => refused >= STATUS_WRITE_FAILING_AFTER, { message: 'three refused writes' });
    await waitFor(() => {
      try {
        c.checkStatusWrites();
        return false;
      } catch {
        return true;
      }
    });
    assert.throws(
      c.checkStatusWrites,
      new RegExp(
        `^Error: NodePodProbe ${node}: the last \\d+ status writes failed \\(since .*; too_large\\): ` +
          '.*etcdserver: request is too large; probe results of this node.s pods do not reach them$',
      ),
    );
    assert.match(await registry.metrics(), /kruise_daemon_pod_probe_status_write_failures\{kind="too_large"\} [3-9]/);
    const failed = events.events.filter((e) => e.reason === EVENT_STATUS_WRITE_FAILED);
    assert.equal(failed.length, 1, 'one event per cause, not per retry');
    assert.equal(failed[0]?.name, node);
    assert.equal(failed[0]?.type, 'Warning');
    assert.match(failed[0]?.message ?? '', /too_large\): .*request is too large/);

    // the cause goes away: the next retry writes, and everything clears
    refuse = false;
    for (let i = 0; i < 10; i++) {
      await clock.advance(30_000);
      const npp = await env.client.get<NodePodProbe>(NODE_POD_PROBES, node);
      if (npp.status?.podProbeStatuses?.length) break;
    }
    await waitFor(async () => (await env.client.get<NodePodProbe>(NODE_POD_PROBES, node)).status?.podProbeStatuses);
    await waitFor(() => {
      try {
        c.checkStatusWrites();
        return true;
      } catch {
        return false;
      }
    });
    assert.match(await registry.metrics(), /kruise_daemon_pod_probe_status_write_failures\{kind="too_large"\} 0/);
  });
});
