// kubelet-lite on the local cluster: real pods on the real containerd, driven through the API emulator. Two private
// kubelet-lite processes run beside the cluster's own: "fast" (three nodes, timers x0.1) and "slow" (one node,
// timers x10, so a sync that happens within a test's wait can only come from an event, not from a retry timer).
import assert from 'node:assert/strict';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CriClient } from '../../../src/cri/index.js';
import { CoreResources, KubeClient, loadConnection } from '../../../src/kube/index.js';
import { containerHash } from '../../cluster/kubelet-lite/hash.js';
import { NODE_LABEL } from '../../cluster/kubelet-lite/labels.js';
import type { Pod } from '../../cluster/kubelet-lite/types.js';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import { KubeletLiteProcess, uniqueSuffix } from './kubelet-process.js';
import {
  container,
  containerId,
  createPod,
  criStatus,
  getPod,
  isRunningAndReady,
  NAMESPACE,
  podManifest,
  sandboxesOf,
  shell,
  statusOf,
  waitForPod,
} from './pods.js';

/** Every key of `expected` has that value in `actual`. */
function assertIncludes(actual: object | null | undefined, expected: Record<string, unknown>): void {
  const picked = Object.fromEntries(
    Object.keys(expected).map((k) => [k, (actual as Record<string, unknown> | null | undefined)?.[k]]),
  );
  assert.deepEqual(picked, expected);
}

describe('kubelet-lite (local cluster)', function () {
  this.timeout(120_000);
  let cluster: ClusterEnv;
  let kube: KubeClient;
  let cri: CriClient;
  let fast: KubeletLiteProcess;
  let slow: KubeletLiteProcess;
  let nodes: string[];
  let slowNode: string;
  const sfx = uniqueSuffix();
  const name = (base: string): string => `${base}-${sfx}`;

  before(async () => {
    cluster = await useCluster();
    kube = new KubeClient(await loadConnection({ kubeconfig: cluster.vars.KUBECONFIG }));
    cri = new CriClient({ socket: cluster.runtimeSocket });
    nodes = [`kl-a-${sfx}`, `kl-b-${sfx}`, `kl-c-${sfx}`];
    slowNode = `kl-slow-${sfx}`;
    fast = new KubeletLiteProcess(cluster, nodes, 0.1);
    slow = new KubeletLiteProcess(cluster, [slowNode], 10);
    await Promise.all([fast.start(), slow.start()]);
  });

  after(async () => {
    await fast?.cleanUp().catch(() => undefined);
    await slow?.cleanUp().catch(() => undefined);
    cri?.close();
    kube?.close();
  });

  it('registers its nodes Ready with capacity, nodeInfo and a lease', async () => {
    const version = await cri.version({});
    for (const node of nodes) {
      const obj = (await kube.get(CoreResources.nodes, node)) as unknown as {
        status: {
          conditions: { type: string; status: string }[];
          capacity: Record<string, string>;
          allocatable: Record<string, string>;
          nodeInfo: Record<string, string>;
        };
      };
      assert.equal(obj.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
      assert.equal(obj.status.capacity.pods, '110');
      assert.equal(obj.status.allocatable.pods, '110');
      assert.equal(obj.status.nodeInfo.containerRuntimeVersion, `containerd://${version.runtime_version}`);
      const lease = (await kube.get(CoreResources.leases, node, { namespace: 'kube-node-lease' })) as unknown as {
        spec: { holderIdentity: string; renewTime: string };
      };
      assert.equal(lease.spec.holderIdentity, node);
    }
  });

  it('runs a two-container pod: Running with a pod IP, both ready, kubelet labels and annotations on the CRI objects, env from an annotation', async () => {
    const pod = podManifest(
      name('two'),
      nodes[0]!,
      [
        container('app', cluster.images.busybox1, {
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'GREETING', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['greeting']" } } },
            { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            { name: 'COMPOSED', value: 'say-$(GREETING)-$$(GREETING)' },
          ],
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'true'] } } },
          readinessProbe: { exec: { command: ['sh', '-c', 'true'] }, periodSeconds: 1 },
        }),
        container('sidecar', cluster.images.busybox2),
      ],
      {},
      { greeting: 'hello from the annotation' },
    );
    pod.metadata.labels = { app: 'two', 'io.kubernetes.pod.name': 'overridden' };
    const created = await createPod(kube, pod);
    const running = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running and Ready');
    assert.match(running.status?.podIP ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(running.status?.podIPs?.[0]?.ip, running.status?.podIP);
    assert.equal(running.status?.hostIP, '127.0.0.1');
    for (const c of ['app', 'sidecar']) {
      const s = statusOf(running, c);
      assert.equal(s?.ready, true, c);
      assert.equal(s?.started, true, c);
      assert.equal(s?.restartCount, 0, c);
      assert.match(s?.containerID ?? '', /^containerd:\/\/[0-9a-f]{64}$/, c);
      assert.ok((s?.imageID ?? '').includes('@sha256:'), c);
      assert.equal(typeof s?.state.running?.startedAt, 'string', c);
    }
    for (const type of ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']) {
      assert.equal(running.status?.conditions?.find((c) => c.type === type)?.status, 'True', type);
    }

    const [sandbox] = await sandboxesOf(cri, created.metadata.uid);
    assert.deepEqual(sandbox?.labels, {
      app: 'two',
      'io.kubernetes.pod.name': pod.metadata.name,
      'io.kubernetes.pod.namespace': NAMESPACE,
      'io.kubernetes.pod.uid': created.metadata.uid,
      [NODE_LABEL]: nodes[0],
    });
    assertIncludes(sandbox?.annotations, { greeting: 'hello from the annotation' });
    assertIncludes(sandbox?.metadata, {
      name: pod.metadata.name,
      namespace: NAMESPACE,
      uid: created.metadata.uid,
      attempt: 0,
    });

    const appId = containerId(statusOf(running, 'app'));
    const app = await criStatus(cri, appId);
    const ownLabels = Object.fromEntries(
      Object.entries(app.labels).filter(([k]) => !k.startsWith('io.cri-containerd')),
    );
    assert.deepEqual(ownLabels, {
      'io.kubernetes.pod.name': pod.metadata.name,
      'io.kubernetes.pod.namespace': NAMESPACE,
      'io.kubernetes.pod.uid': created.metadata.uid,
      'io.kubernetes.container.name': 'app',
    });
    assertIncludes(app.annotations, {
      'io.kubernetes.container.hash': containerHash({ name: 'app', image: cluster.images.busybox1 }),
      'io.kubernetes.container.restartCount': '0',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.terminationGracePeriod': '5',
    });
    assert.deepEqual(JSON.parse(app.annotations['io.kubernetes.container.preStopHandler']!), {
      exec: { command: ['sh', '-c', 'true'] },
    });
    assert.deepEqual(JSON.parse(app.annotations['io.kubernetes.container.ports']!), [
      { containerPort: 8080, protocol: 'TCP' },
    ]);
    assert.equal(app.metadata?.attempt, 0);
    assert.match(app.log_path ?? '', /app\/0\.log$/);

    // Debian's busybox has no printenv: read the variables with sh
    assert.equal(await shell(cri, appId, 'echo "$GREETING"'), 'hello from the annotation');
    assert.equal(await shell(cri, appId, 'echo "$POD_IP"'), running.status?.podIP);
    assert.equal(await shell(cri, appId, 'echo "$NODE"'), nodes[0]);
    assert.equal(await shell(cri, appId, 'echo "$COMPOSED"'), 'say-hello from the annotation-$(GREETING)');
  });

  it('holds a container needing a missing ConfigMap key in CreateContainerConfigError and starts it after the key is added', async () => {
    const cm = name('barrier');
    await kube.create(
      CoreResources.configMaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm, namespace: NAMESPACE }, data: {} } as never,
      { namespace: NAMESPACE },
    );
    const pod = podManifest(name('blocked'), nodes[1]!, [
      container('first', cluster.images.busybox1),
      container('second', cluster.images.busybox1, {
        env: [{ name: 'BARRIER', valueFrom: { configMapKeyRef: { name: cm, key: 'p_1' } } }],
      }),
    ]);
    await createPod(kube, pod);
    const blocked = await waitForPod(
      kube,
      pod.metadata.name,
      (p) =>
        statusOf(p, 'second')?.state.waiting?.reason === 'CreateContainerConfigError' &&
        statusOf(p, 'first')?.state.running !== undefined,
      'second container waiting with CreateContainerConfigError',
    );
    assert.equal(
      statusOf(blocked, 'second')?.state.waiting?.message,
      `couldn't find key p_1 in ConfigMap ${NAMESPACE}/${cm}`,
    );
    assert.equal(statusOf(blocked, 'second')?.restartCount, 0);
    assert.equal(blocked.status?.phase, 'Pending');

    await kube.patch(
      CoreResources.configMaps,
      cm,
      { data: { p_1: 'released' } },
      { type: 'merge', namespace: NAMESPACE },
    );
    const started = await waitForPod(
      kube,
      pod.metadata.name,
      isRunningAndReady,
      'Running after the key was added (next sync)',
    );
    assert.equal(await shell(cri, containerId(statusOf(started, 'second')), 'echo "$BARRIER"'), 'released');
  });

  it('starts a blocked container at once when the pod is touched after the key is added (no retry timer involved)', async () => {
    // the slow node retries a failed sync after 100-150 s: within this wait only the pod update can start it
    const cm = name('barrier-slow');
    await kube.create(
      CoreResources.configMaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm, namespace: NAMESPACE }, data: {} } as never,
      { namespace: NAMESPACE },
    );
    const pod = podManifest(name('touch'), slowNode, [
      container('waiter', cluster.images.busybox1, {
        env: [{ name: 'BARRIER', valueFrom: { configMapKeyRef: { name: cm, key: 'p_1' } } }],
      }),
    ]);
    await createPod(kube, pod);
    await waitForPod(
      kube,
      pod.metadata.name,
      (p) => statusOf(p, 'waiter')?.state.waiting?.reason === 'CreateContainerConfigError',
      'CreateContainerConfigError',
    );
    await kube.patch(CoreResources.configMaps, cm, { data: { p_1: 'go' } }, { type: 'merge', namespace: NAMESPACE });
    await kube.patch(
      CoreResources.pods,
      pod.metadata.name,
      { metadata: { annotations: { 'test/touch': '1' } } },
      { type: 'merge', namespace: NAMESPACE },
    );
    const started = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running after the touch', 30_000);
    assert.equal(await shell(cri, containerId(statusOf(started, 'waiter')), 'echo "$BARRIER"'), 'go');
  });

  it('recreates a container stopped through CRI as a new container: restartCount 1, new id, same pod IP', async () => {
    const pod = podManifest(name('stopped'), nodes[2]!, [container('app', cluster.images.busybox1)]);
    await createPod(kube, pod);
    const before = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running');
    const oldId = containerId(statusOf(before, 'app'));
    await cri.stopContainer({ container_id: oldId, timeout: 5 });
    const after = await waitForPod(
      kube,
      pod.metadata.name,
      (p) => statusOf(p, 'app')?.restartCount === 1 && isRunningAndReady(p),
      'restarted with restartCount 1',
    );
    const newId = containerId(statusOf(after, 'app'));
    assert.notEqual(newId, oldId);
    assert.equal(after.status?.podIP, before.status?.podIP);
    assert.equal(statusOf(after, 'app')?.lastState.terminated?.containerID, `containerd://${oldId}`);
    const fresh = await criStatus(cri, newId);
    assert.equal(fresh.metadata?.attempt, 1);
    assert.equal(fresh.annotations['io.kubernetes.container.restartCount'], '1');
    assert.match(fresh.log_path ?? '', /app\/1\.log$/);
    const old = await criStatus(cri, oldId);
    assert.equal(old.state, 'CONTAINER_EXITED');
    assert.equal(fresh.state, 'CONTAINER_RUNNING');
  });

  it('restarts a container whose liveness probe fails', async () => {
    const pod = podManifest(name('liveness'), nodes[0]!, [
      container('app', cluster.images.busybox1, {
        livenessProbe: {
          exec: { command: ['sh', '-c', 'test ! -e /tmp/unhealthy'] },
          periodSeconds: 1,
          failureThreshold: 1,
        },
      }),
    ]);
    await createPod(kube, pod);
    const before = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running');
    const oldId = containerId(statusOf(before, 'app'));
    await shell(cri, oldId, 'touch /tmp/unhealthy');
    const after = await waitForPod(
      kube,
      pod.metadata.name,
      (p) => (statusOf(p, 'app')?.restartCount ?? 0) >= 1 && statusOf(p, 'app')?.state.running !== undefined,
      'restarted after the liveness failure',
    );
    assert.notEqual(containerId(statusOf(after, 'app')), oldId);
    assert.equal((await criStatus(cri, oldId)).state, 'CONTAINER_EXITED');
  });

  it('runs the preStop hook when the pod is deleted, removes its sandbox, then the pod object', async () => {
    const hostDir = join(fast.dir, `prestop-${sfx}`);
    await rm(hostDir, { recursive: true, force: true });
    await mkdir(hostDir, { recursive: true });
    const pod = podManifest(
      name('deleted'),
      nodes[1]!,
      [
        container('app', cluster.images.busybox1, {
          volumeMounts: [{ name: 'host', mountPath: '/host' }],
          lifecycle: {
            preStop: { exec: { command: ['sh', '-c', 'echo "preStop ran in $HOSTNAME" > /host/prestop.txt'] } },
          },
        }),
      ],
      { volumes: [{ name: 'host', hostPath: { path: hostDir, type: 'Directory' } }] },
    );
    const created = await createPod(kube, pod);
    await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running');
    assert.equal((await sandboxesOf(cri, created.metadata.uid)).length, 1);
    await kube.delete(CoreResources.pods, pod.metadata.name, { namespace: NAMESPACE });
    await waitFor(async () => (await getPod(kube, pod.metadata.name)) === undefined, {
      timeoutMs: 60_000,
      message: 'the pod object to be removed',
    });
    assert.equal(await readFile(join(hostDir, 'prestop.txt'), 'utf8'), `preStop ran in ${pod.metadata.name}\n`);
    assert.equal((await sandboxesOf(cri, created.metadata.uid)).length, 0);
    const left = await cri.listContainers({
      filter: { label_selector: { 'io.kubernetes.pod.uid': created.metadata.uid } },
    });
    assert.equal(left.containers.length, 0);
  });

  it('adopts its running pods after a restart (same sandbox and container ids)', async () => {
    const pod = podManifest(name('adopted'), nodes[2]!, [
      container('one', cluster.images.busybox1),
      container('two', cluster.images.busybox1, { readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 } }),
    ]);
    const created = await createPod(kube, pod);
    const before = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running');
    const ids = ['one', 'two'].map((c) => containerId(statusOf(before, c)));
    const sandboxIds = (await sandboxesOf(cri, created.metadata.uid)).map((s) => s.id);

    await fast.kill();
    await fast.start();
    // a pod created after the restart runs: the restarted kubelet-lite syncs
    const probe = podManifest(name('after-restart'), nodes[2]!, [container('app', cluster.images.busybox1)]);
    await createPod(kube, probe);
    await waitForPod(kube, probe.metadata.name, isRunningAndReady, 'Running after the restart');
    const after = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'still Running and Ready');

    assert.deepEqual(
      ['one', 'two'].map((c) => containerId(statusOf(after, c))),
      ids,
    );
    assert.deepEqual(
      ['one', 'two'].map((c) => statusOf(after, c)?.restartCount),
      [0, 0],
    );
    assert.deepEqual(
      (await sandboxesOf(cri, created.metadata.uid)).map((s) => s.id),
      sandboxIds,
    );
    const all = await cri.listContainers({
      filter: { label_selector: { 'io.kubernetes.pod.uid': created.metadata.uid } },
    });
    assert.deepEqual(all.containers.map((c) => c.id).sort(), [...ids].sort());
  });

  it('runs pods on three nodes at once', async () => {
    const pods = nodes.map((node, i) =>
      podManifest(name(`spread-${i}`), node, [container('app', cluster.images.busybox1)]),
    );
    const created = await Promise.all(pods.map((p) => createPod(kube, p)));
    const running = await Promise.all(pods.map((p) => waitForPod(kube, p.metadata.name, isRunningAndReady, 'Running')));
    assert.equal(new Set(running.map((p) => p.status?.podIP)).size, 3);
    for (const [i, p] of created.entries()) {
      const [sandbox] = await sandboxesOf(cri, p.metadata.uid);
      assert.equal(sandbox?.labels?.[NODE_LABEL], nodes[i]);
    }
    const nodesOf = (p: Pod): string | undefined => p.spec.nodeName;
    assert.deepEqual(running.map(nodesOf), nodes);
  });

  it('runs init containers to completion first; a restartPolicy Never pod ends Succeeded', async () => {
    const pod = podManifest(
      name('init'),
      nodes[0]!,
      [
        container('main', cluster.images.busybox1, {
          command: ['sh', '-c', 'test "$(cat /work/token)" = from-init'],
          volumeMounts: [{ name: 'work', mountPath: '/work' }],
        }),
      ],
      {
        restartPolicy: 'Never',
        initContainers: [
          container('prepare', cluster.images.busybox1, {
            command: ['sh', '-c', 'echo from-init > /work/token'],
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
          }),
        ],
        volumes: [{ name: 'work', emptyDir: {} }],
      },
    );
    await createPod(kube, pod);
    const done = await waitForPod(
      kube,
      pod.metadata.name,
      (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed',
      'a terminal phase',
    );
    assert.equal(done.status?.phase, 'Succeeded', JSON.stringify(done.status));
    assert.equal(done.status?.initContainerStatuses?.[0]?.state.terminated?.exitCode, 0);
    assert.equal(done.status?.initContainerStatuses?.[0]?.state.terminated?.reason, 'Completed');
    assert.equal(statusOf(done, 'main')?.state.terminated?.exitCode, 0);
    assert.equal(statusOf(done, 'main')?.restartCount, 0);
  });

  it('backs off a crashing container (CrashLoopBackOff) and counts its restarts', async () => {
    const pod = podManifest(name('crash'), nodes[1]!, [
      container('app', cluster.images.busybox1, { command: ['sh', '-c', 'exit 3'] }),
    ]);
    await createPod(kube, pod);
    const looping = await waitForPod(
      kube,
      pod.metadata.name,
      (p) =>
        statusOf(p, 'app')?.state.waiting?.reason === 'CrashLoopBackOff' &&
        (statusOf(p, 'app')?.restartCount ?? 0) >= 2,
      'CrashLoopBackOff after two restarts',
    );
    const s = statusOf(looping, 'app');
    assert.match(
      s?.state.waiting?.message ?? '',
      new RegExp(`^back-off \\S+ restarting failed container=app pod=${pod.metadata.name}_${NAMESPACE}\\(`),
    );
    assert.equal(s?.lastState.terminated?.exitCode, 3);
    assert.equal(s?.lastState.terminated?.reason, 'Error');
    assert.equal(looping.status?.phase, 'Running');
    assert.equal(s?.ready, false);
  });

  it('holds Ready False until every readiness gate condition is True', async () => {
    const gate = 'example.com/gate';
    const pod = podManifest(name('gated'), nodes[2]!, [container('app', cluster.images.busybox1)], {
      readinessGates: [{ conditionType: gate }],
    });
    await createPod(kube, pod);
    const gated = await waitForPod(
      kube,
      pod.metadata.name,
      (p) =>
        p.status?.phase === 'Running' &&
        p.status.conditions?.find((c) => c.type === 'ContainersReady')?.status === 'True',
      'Running with its containers ready',
    );
    const ready = gated.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'ReadinessGatesNotReady');
    await kube.patch(
      CoreResources.pods,
      pod.metadata.name,
      { status: { conditions: [{ type: gate, status: 'True' }] } },
      { type: 'strategic', namespace: NAMESPACE, subresource: 'status' },
    );
    const after = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Ready after the gate turned True');
    assert.equal(after.status?.conditions?.find((c) => c.type === gate)?.status, 'True');
  });

  it('recreates a container whose image changed in the pod spec (in-place update), keeping the sandbox', async () => {
    const pod = podManifest(name('inplace'), nodes[0]!, [container('app', cluster.images.busybox1)]);
    const created = await createPod(kube, pod);
    const before = await waitForPod(kube, pod.metadata.name, isRunningAndReady, 'Running');
    const oldId = containerId(statusOf(before, 'app'));
    await kube.patch(
      CoreResources.pods,
      pod.metadata.name,
      { spec: { containers: [{ name: 'app', image: cluster.images.busybox2 }] } },
      { type: 'strategic', namespace: NAMESPACE },
    );
    const after = await waitForPod(
      kube,
      pod.metadata.name,
      (p) =>
        statusOf(p, 'app')?.image === cluster.images.busybox2 &&
        statusOf(p, 'app')?.restartCount === 1 &&
        isRunningAndReady(p),
      'running the new image',
    );
    const newId = containerId(statusOf(after, 'app'));
    assert.notEqual(newId, oldId);
    assert.notEqual(statusOf(after, 'app')?.imageID, statusOf(before, 'app')?.imageID);
    assert.equal(after.status?.podIP, before.status?.podIP);
    assert.equal((await sandboxesOf(cri, created.metadata.uid)).length, 1);
    const fresh = await criStatus(cri, newId);
    assert.equal(
      fresh.annotations['io.kubernetes.container.hash'],
      containerHash({ name: 'app', image: cluster.images.busybox2 }),
    );
    assert.match(await shell(cri, newId, 'cat /VERSION'), /2\.0$/);
  });

  it('reports a missing image as ErrImagePull, then ImagePullBackOff, and keeps the pod Pending', async () => {
    const image = `${cluster.registry}/test/missing:1.0`;
    const pod = podManifest(name('noimage'), nodes[1]!, [container('app', image)]);
    await createPod(kube, pod);
    const pulling = await waitForPod(
      kube,
      pod.metadata.name,
      (p) => statusOf(p, 'app')?.state.waiting?.reason === 'ErrImagePull',
      'ErrImagePull',
    );
    assert.equal(pulling.status?.phase, 'Pending');
    const backoff = await waitForPod(
      kube,
      pod.metadata.name,
      (p) => statusOf(p, 'app')?.state.waiting?.reason === 'ImagePullBackOff',
      'ImagePullBackOff',
    );
    assert.equal(statusOf(backoff, 'app')?.state.waiting?.message, `Back-off pulling image "${image}"`);
    assert.equal(backoff.status?.phase, 'Pending');
  });
});
