// CRRs beside the newer kubelet's own restart machinery, on the real default cell (Kubernetes 1.37, containerd 2.4):
// container restart rules (KEP-5307, beta and on since 1.35): the real API server's call to our webhook admits a CRR
// exactly when kubelet restarts the container after any exit code a stop can give; RestartAllContainers (KEP-5532,
// beta and on since 1.36) firing while a CRR is stopping a container: the two do not fight; and a container's
// lifecycle.stopSignal (KEP-4960, alpha; the local cluster turns ContainerStopSignals on): the CRR's stop sends it.
import assert from 'node:assert/strict';
import type { V1ContainerRestartRule } from '@kubernetes/client-node';
import { stackOf } from '../../cluster/stack.js';
import type { WireContainer } from '../../../src/api/wire.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import {
  containerStatus,
  createCrr,
  getPod,
  runPod,
  SLEEP_FOREVER,
  startCrrStack,
  waitCompleted,
  type CrrStack,
  type PodObject,
} from './stack.js';

const NAMESPACE = 'e2e-crr-rules';

type EventObject = KubeObject & {
  reason?: string;
  message?: string;
  source?: { component?: string };
  involvedObject?: { name?: string };
};

describe('ContainerRecreateRequest e2e: restart rules, RestartAllContainers, stop signals', function () {
  this.timeout(240_000);
  let stack: CrrStack;
  let image: string;
  let seq = 0;

  /** The cluster's Kubernetes minor: each feature is tested on the cells that have it on by default. */
  let minor = 0;
  /** Skips the test (pending, with the reason) on a cell whose Kubernetes lacks the feature. */
  function needs(ctx: Mocha.Context, since: number, feature: string): void {
    if (minor >= since) return;
    process.stderr.write(
      `      [skipped] ${feature} is on by default from Kubernetes 1.${since}; this cell runs 1.${minor}\n`,
    );
    ctx.skip();
  }

  before(async () => {
    stack = await startCrrStack({ namespace: NAMESPACE });
    image = stack.cluster.images.busybox1;
    minor = Number(stackOf(stack.cluster.dir).kubernetes.split('.')[1]);
  });
  after(async () => {
    await stack?.close();
  });

  function pod(containers: WireContainer[], spec: Partial<NonNullable<PodObject['spec']>> = {}): PodObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `rules-pod-${++seq}`, namespace: NAMESPACE },
      spec: {
        nodeName: stack.node.name,
        terminationGracePeriodSeconds: 5,
        ...spec,
        containers: containers.map((c) => ({ image, command: SLEEP_FOREVER, ...c })),
      },
    };
  }

  const rule = (action: string, operator: string, values: number[]): V1ContainerRestartRule => ({
    action,
    exitCodes: { operator, values },
  });

  async function events(podName: string): Promise<EventObject[]> {
    const list = await stack.client.list<EventObject>(CoreResources.events, { namespace: NAMESPACE });
    return list.items.filter((e) => e.involvedObject?.name === podName);
  }

  it('denies a CRR whose restart rules leave a stop exit code (SIGKILL 137) unrestarted, naming the codes', async function () {
    needs(this, 35, 'ContainerRestartRules (KEP-5307)');
    const target = await runPod(
      stack,
      pod([{ name: 'app', restartPolicy: 'Never', restartPolicyRules: [rule('Restart', 'In', [0, 143])] }], {
        restartPolicy: 'Never',
      }),
    );
    await assert.rejects(
      createCrr(stack, `crr-rules-denied-${seq}`, { podName: target.metadata!.name!, containers: [{ name: 'app' }] }),
      (err: unknown) =>
        err instanceof ApiError &&
        err.message.includes(
          'spec.containers[0].name: not allowed to recreate container app: its own restartPolicy is Never and no ' +
            'Restart or RestartAllContainers rule of its restartPolicyRules matches those codes, so kubelet would ' +
            'not start it again if the stop ends it with exit code 1-142, 144-255',
        ),
    );
  });

  it('admits a CRR in a restartPolicy Never pod when a rule and the own policy cover every code; kubelet restarts it by the rule', async function () {
    needs(this, 35, 'ContainerRestartRules (KEP-5307)');
    // exit 0 (the SIGTERM trap) only the rule restarts (OnFailure would not); 255 only OnFailure
    const before = await runPod(
      stack,
      pod([{ name: 'app', restartPolicy: 'OnFailure', restartPolicyRules: [rule('Restart', 'NotIn', [255])] }], {
        restartPolicy: 'Never',
      }),
    );
    const name = `crr-rules-admitted-${seq}`;
    await createCrr(stack, name, { podName: before.metadata!.name!, containers: [{ name: 'app' }] });
    const done = await waitCompleted(stack, name, 90_000);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    const after = (await getPod(stack, before.metadata!.name!))!;
    const app = containerStatus(after, 'app');
    assert.equal(app.restartCount, containerStatus(before, 'app').restartCount + 1);
    assert.equal(app.lastState?.terminated?.exitCode, 0, 'stopped with a clean exit, which only the rule restarts');
    assert.ok(app.state?.running, 'running again');
  });

  it('RestartAllContainers firing while the CRR runs its preStop hook: the CRR completes, stops nothing twice, every container runs again', async function () {
    needs(this, 36, 'RestartAllContainersOnContainerExits (KEP-5532)');
    // the CRR's preStop hook in app makes trigger exit 42, whose rule restarts every container of the pod in place
    // (kubelet kills them with no grace and removes them, then starts them all again) while the hook still runs
    const shared = [{ name: 'shared', mountPath: '/shared' }];
    const before = await runPod(
      stack,
      pod(
        [
          {
            name: 'app',
            volumeMounts: shared,
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'touch /shared/go; sleep 20'] } } },
          },
          {
            name: 'trigger',
            volumeMounts: shared,
            command: ['sh', '-c', 'while [ ! -f /shared/go ]; do sleep 0.2; done; rm -f /shared/go; exit 42'],
            restartPolicy: 'Always',
            restartPolicyRules: [rule('RestartAllContainers', 'In', [42])],
          },
        ],
        { volumes: [{ name: 'shared', emptyDir: {} }] },
      ),
    );
    const podName = before.metadata!.name!;
    const name = `crr-restart-all-${seq}`;
    await createCrr(stack, name, {
      podName,
      containers: [{ name: 'app' }],
      strategy: { terminationGracePeriodSeconds: 30 },
    });
    const done = await waitCompleted(stack, name, 120_000);
    assert.equal(done.status?.message, undefined);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);

    const after = await waitFor(
      () =>
        getPod(stack, podName).then((p) =>
          p && ['app', 'trigger'].every((c) => containerStatus(p, c).state?.running && containerStatus(p, c).ready)
            ? p
            : undefined,
        ),
      { timeoutMs: 60_000, message: 'every container running and ready again' },
    );
    for (const c of ['app', 'trigger']) {
      assert.notEqual(containerStatus(after, c).containerID, containerStatus(before, c).containerID, `${c} is new`);
    }
    assert.equal(after.metadata?.uid, before.metadata?.uid, 'the same pod, restarted in place');
    const ours = (await events(podName)).filter(
      (e) => e.reason === 'Killing' && (e.message ?? '').includes(`by ContainerRecreateRequest ${name}`),
    );
    assert.equal(ours.length, 1, 'the CRR stopped app once');
    const restartAll = (await events(podName)).filter(
      (e) => e.source?.component === 'kubelet' && e.reason === 'Killing',
    );
    assert.ok(restartAll.length > 0, "kubelet's RestartAllContainers killed the pod's containers");
    // the instance running now is the one the CRR completed on: nothing stopped it after the completion
    const app = containerStatus(after, 'app');
    const later = (await getPod(stack, podName))!;
    assert.equal(containerStatus(later, 'app').containerID, app.containerID);
  });

  it('stops a container with its lifecycle.stopSignal (SIGUSR1): a clean exit well within the grace period, where SIGTERM is ignored', async function () {
    // The runtime must take the signal from the CRI container config: containerd 2.4 does (internal/cri/server
    // container_create.go reads GetStopSignal); containerd 2.2.9 and 1.6 read only the image's STOPSIGNAL, so there
    // neither kubelet's stop nor ours uses lifecycle.stopSignal, and kubelet reports no stopSignal in the status.
    const runtime = stackOf(stack.cluster.dir).runtime;
    if (runtime === 'containerd-2.2' || runtime === 'containerd-1.6') {
      process.stderr.write(`      [skipped] ${runtime} does not apply a container's lifecycle.stopSignal (KEP-4960)\n`);
      this.skip();
    }
    const command = ['sh', '-c', "trap 'exit 0' USR1; trap '' TERM; while true; do sleep 1; done"];
    // control: without a stop signal, SIGTERM is ignored and the grace period's SIGKILL ends it (137)
    const control = await runPod(stack, pod([{ name: 'app', command }], { os: { name: 'linux' } }));
    const controlCrr = `crr-term-${seq}`;
    await createCrr(stack, controlCrr, {
      podName: control.metadata!.name!,
      containers: [{ name: 'app' }],
      strategy: { terminationGracePeriodSeconds: 2 },
    });
    await waitCompleted(stack, controlCrr, 90_000);
    const controlAfter = (await getPod(stack, control.metadata!.name!))!;
    assert.equal(containerStatus(controlAfter, 'app').lastState?.terminated?.exitCode, 137, 'SIGTERM is ignored');

    const grace = 30;
    const before = await runPod(
      stack,
      pod([{ name: 'app', command, lifecycle: { stopSignal: 'SIGUSR1' } }], { os: { name: 'linux' } }),
    );
    // kubelet reports the signal the runtime reports in ContainerStatus: containerd 2.4 does; CRI-O 1.36.1 applies the
    // config's signal when it stops the container (server/container_create.go) but leaves it out of ContainerStatus
    if (runtime === 'cri-o') {
      assert.equal(containerStatus(before, 'app').stopSignal, undefined, 'CRI-O 1.36.1 does not report it');
      process.stderr.write('      [cri-o] applies lifecycle.stopSignal, reports none in the container status\n');
    } else {
      assert.equal(
        containerStatus(before, 'app').stopSignal,
        'SIGUSR1',
        'kubelet reports the stop signal (ContainerStopSignals on)',
      );
    }
    const name = `crr-stop-signal-${seq}`;
    const created = await createCrr(stack, name, {
      podName: before.metadata!.name!,
      containers: [{ name: 'app' }],
      strategy: { terminationGracePeriodSeconds: grace },
    });
    const done = await waitCompleted(stack, name, 90_000);
    assert.deepEqual(done.status?.containerRecreateStates, [{ name: 'app', phase: 'Succeeded', isKilled: true }]);
    const after = (await getPod(stack, before.metadata!.name!))!;
    const terminated = containerStatus(after, 'app').lastState?.terminated;
    assert.equal(terminated?.exitCode, 0, 'only SIGUSR1 makes it exit 0');
    const stoppedAfterMs =
      Date.parse(terminated?.finishedAt ?? '') - Date.parse(created.metadata.creationTimestamp ?? '');
    assert.ok(
      stoppedAfterMs < (grace / 2) * 1000,
      `stopped ${stoppedAfterMs} ms after the CRR was made, not after the ${grace} s grace period`,
    );
  });
});
