// The image puller end to end on the real cluster: the agent inside kd-node-1 (the kruise-daemon ServiceAccount's
// token, RBAC enforced by kube-apiserver), the node's own containerd and the cluster's registries; no controller (the
// test writes the node's NodeImage as the controller or a user would). A registry proxy of ours stalls blobs.
// Without a controller the agent reads pull-secret copies itself, as in deploy/overlays/agent-only: the test grants
// it that read (deploy/'s default install does not; test/e2e/operate/pull-credentials.test.ts covers that path).
import assert from 'node:assert/strict';
import type { ImageTagPullPolicy } from '../../../src/api/nodeimage.js';
import { CriClient } from '../../../src/cri/client.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { AgentProcess, httpGet } from '../../component/daemon/agent-process.js';
import {
  agentCounter,
  dockerConfigSecret,
  emptyNodeImage,
  pullImageCalls,
  removeImages,
  setNodeImageSpec,
  tagStatusOf,
  waitForStatus,
  DAEMON_CONFIG_NAMESPACE,
} from '../../support/nodeimages.js';
import {
  nodeLauncher,
  startSystem,
  useRealCluster,
  type RealCluster,
  type RealSystem,
} from '../../support/real-cluster.js';
import {
  CLUSTER_ROLE_BINDINGS,
  createOrKeep,
  ROLE_BINDINGS,
  ROLES,
  eventsSince,
  freshNamespace,
  nodeRegistryProxy,
  removeNamespace,
  testServiceAccount,
  type NodeRegistryProxy,
} from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { imageIdDigest } from '../../../src/daemon/imagepuller/tag-pull.js';

const NS = 'e2e-imagepuller';
const SECRET = 'e2e-imagepuller-auth';
const HEALTH_BINDING = 'e2e-imagepuller-health';
/** deploy/overlays/agent-only/agent/secret-reader.yaml, for the kruise-daemon ServiceAccount. */
const SECRET_READER = 'e2e-imagepuller-agent-secret-reader';

function policy(p: ImageTagPullPolicy = {}): ImageTagPullPolicy {
  return { timeoutSeconds: 60, backoffLimit: 0, ttlSecondsAfterFinished: 300, ...p };
}

describe('imagepuller e2e: NodeImage on the real cluster', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let node: string;
  let cri: CriClient;
  let base: string;
  let reg: string;
  let slow: NodeRegistryProxy | undefined;

  const agent = (): AgentProcess => system.agents.get(node)!.process;

  before(async () => {
    cluster = await useRealCluster();
    node = cluster.nodes[0]!.name;
    reg = cluster.registry;
    cri = new CriClient({ socket: cluster.nodes[0]!.hostPaths.runtimeSocket });
    await freshNamespace(cluster.admin, NS);
    await deleteSecret();
    await createOrKeep(cluster.admin, ROLES, {
      metadata: { name: SECRET_READER, namespace: DAEMON_CONFIG_NAMESPACE },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
    } as KubeObject);
    await createOrKeep(cluster.admin, ROLE_BINDINGS, {
      metadata: { name: SECRET_READER, namespace: DAEMON_CONFIG_NAMESPACE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SECRET_READER },
      subjects: [{ kind: 'ServiceAccount', name: 'kruise-daemon', namespace: 'kruise-system' }],
    } as KubeObject);
    system = await startSystem(cluster, { controller: false, nodes: [cluster.nodes[0]!] });
    base = system.agents.get(node)!.url;
  });

  after(async () => {
    await setNodeImageSpec(cluster.admin, node, { images: {} }).catch(() => undefined);
    await system?.stop();
    await slow?.close();
    cri?.close();
    await deleteSecret().catch(() => undefined);
    await cluster?.admin.delete(CLUSTER_ROLE_BINDINGS, HEALTH_BINDING).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    for (const rt of [ROLE_BINDINGS, ROLES]) {
      await cluster?.admin.delete(rt, SECRET_READER, { namespace: DAEMON_CONFIG_NAMESPACE }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
    if (cluster) await removeNamespace(cluster.admin, NS);
  });

  afterEach(() => {
    if (slow) slow.proxy.stallBlobs = false;
  });

  async function deleteSecret(): Promise<void> {
    await cluster.admin
      .delete(CoreResources.secrets, SECRET, { namespace: DAEMON_CONFIG_NAMESPACE })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }

  async function stallingProxy(): Promise<NodeRegistryProxy['proxy']> {
    slow ??= await nodeRegistryProxy(cluster);
    return slow.proxy;
  }

  it('/healthz fails while the NodeImage cannot be listed (no RBAC grant yet), then passes once granted', async () => {
    // An agent with a ServiceAccount of its own, on the other node: kube-apiserver answers its list with 403 until
    // the agent's ClusterRole is bound to it.
    const other = cluster.nodes[1]!;
    const kubeconfig = await testServiceAccount(cluster, NS, 'no-rights-yet');
    const probe = new AgentProcess({
      launcher: await nodeLauncher(other),
      host: other.ip,
      args: ['--addr', `${other.ip}:0`, '--runtime-socket', other.inNode.runtimeSocket],
      env: { NODE_NAME: other.name, KUBECONFIG: kubeconfig, NODE_OPTIONS: cluster.agentNodeOptions, LOG_LEVEL: 'info' },
    });
    try {
      const url = await probe.baseUrl(30_000);
      const unhealthy = await waitFor(
        async () => {
          const r = await httpGet(`${url}/healthz?verbose`);
          return r.status === 500 && /nodeImageInformerSynced failed: .*not synced.*list failed/.test(r.body)
            ? r
            : undefined;
        },
        { timeoutMs: 30_000, message: '/healthz 500 naming nodeImageInformerSynced and why' },
      );
      // the reason is kube-apiserver's 403 (RBAC), named in the check
      assert.match(
        unhealthy.body,
        /\[-\]nodeImageInformerSynced failed: .*has not synced yet; the last list failed: .*403.*forbidden/i,
      );
      await cluster.admin.create(CLUSTER_ROLE_BINDINGS, {
        metadata: { name: HEALTH_BINDING },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kruise-daemon-role' },
        subjects: [{ kind: 'ServiceAccount', name: 'no-rights-yet', namespace: NS }],
      } as KubeObject);
      const healthy = await waitFor(
        async () => {
          const r = await httpGet(`${url}/healthz?verbose`);
          return /\[\+\]nodeImageInformerSynced ok/.test(r.body) ? r : undefined;
        },
        { timeoutMs: 45_000, message: 'nodeImageInformerSynced ok once granted (list retries back off 1 s → 30 s)' },
      );
      assert.match(healthy.body, /\[\+\]nodeImageInformerSynced ok/);
    } finally {
      await probe.stop();
    }
  });

  it('converges several images and tags with statuses, counters and events; a bad reference fails alone', async () => {
    const since = Date.now();
    const busybox = `${reg}/test/busybox`;
    // the node's sandbox image: on the node already (IfNotPresent finds it), and never removed (kubelet needs it)
    const pause = `${reg}/test/pause`;
    await emptyNodeImage(cluster.admin, node);
    await removeImages(cri, [`${busybox}:1.0`, `${busybox}:2.0`]);
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [busybox]: {
          tags: [
            { tag: '1.0', version: 0, pullPolicy: policy() },
            { tag: '2.0', version: 0, pullPolicy: policy() },
          ],
        },
        [pause]: { tags: [{ tag: '3.9', version: 0, pullPolicy: policy(), imagePullPolicy: 'IfNotPresent' }] },
        [`${reg}/test/Bad_Name`]: { tags: [{ tag: '1', pullPolicy: policy() }] },
        // nothing listens on port 1
        ['127.0.0.1:1/test/busybox']: { tags: [{ tag: '1.0', pullPolicy: policy() }] },
      },
    });
    const done = await waitForStatus(cluster.admin, node, (s) => s.succeeded === 3 && s.failed === 2, {
      message: '3 tags Succeeded and 2 Failed',
    });
    const status = done.status!;
    assert.deepEqual(
      { desired: status.desired, pulling: status.pulling, waiting: status.waiting },
      { desired: 5, pulling: 0, waiting: 0 },
    );
    for (const [image, tag] of [
      [busybox, '1.0'],
      [busybox, '2.0'],
      [pause, '3.9'],
    ] as const) {
      const t = tagStatusOf(status, image, tag)!;
      assert.equal(t.phase, 'Succeeded', `${image}:${tag}`);
      assert.equal(t.progress, 100);
      assert.match(t.imageID ?? '', new RegExp(`^${image.replace(/[.]/g, '\\.')}@sha256:[0-9a-f]{64}$`));
      assert.ok(t.startTime && t.completionTime && t.completionTime >= t.startTime);
      const onNode = await cri.imageStatus({ image: { image: `${image}:${tag}` } });
      assert.equal(
        `${image}@${imageIdDigest(onNode.image?.id ?? '')}`,
        t.imageID,
        'the image is on the node with that id',
      );
    }
    const bad = tagStatusOf(status, `${reg}/test/Bad_Name`, '1')!;
    assert.equal(bad.phase, 'Failed');
    assert.match(bad.message ?? '', /invalid image .*Bad_Name/);
    const unreachable = tagStatusOf(status, '127.0.0.1:1/test/busybox', '1.0')!;
    assert.equal(unreachable.phase, 'Failed');
    assert.match(
      unreachable.message ?? '',
      /registry 127\.0\.0\.1:1 of 127\.0\.0\.1:1\/test\/busybox:1\.0 cannot be reached/,
    );

    assert.ok((await agentCounter(base, 'kruise_daemon_image_pulls_total', { result: 'succeeded' })) >= 2);
    assert.equal(await agentCounter(base, 'kruise_daemon_image_pulls_total', { result: 'failed' }), 2);
    assert.ok((await agentCounter(base, 'kruise_daemon_image_pull_duration_seconds_count')) >= 5);
    await waitFor(async () => (await agentCounter(base, 'kruise_daemon_image_tags', { phase: 'Succeeded' })) === 3, {
      message: 'the tags-by-phase gauge',
    });

    // events of a cluster-scoped object go to namespace default, as kube-apiserver's clients put them
    const events = await waitFor(
      async () => {
        const mine = (await eventsSince(cluster.admin, 'default', since)).filter((e) => e.involvedObject.name === node);
        return mine.filter((e) => e.reason === 'PullImageSucceed').length >= 3 ? mine : undefined;
      },
      { message: 'PullImageSucceed events on the NodeImage' },
    );
    assert.ok(
      events.some((e) => e.reason === 'PullImageFailed' && e.type === 'Warning' && /Bad_Name/.test(e.message ?? '')),
    );
    assert.ok(events.every((e) => e.involvedObject.kind === 'NodeImage'));
  });

  it('fails only the tag whose spec the schema let through with a bad value (version -1)', async () => {
    const image = `${reg}/test/busybox`;
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [image]: {
          tags: [
            { tag: '1.0', version: -1, pullPolicy: policy() },
            { tag: '2.0', version: 0, pullPolicy: policy(), imagePullPolicy: 'IfNotPresent' },
          ],
        },
      },
    });
    const s = await waitForStatus(
      cluster.admin,
      node,
      (st) => st.failed === 1 && st.succeeded === 1 && st.desired === 2,
    );
    const bad = tagStatusOf(s.status!, image, '1.0')!;
    assert.equal(bad.phase, 'Failed');
    assert.match(bad.message ?? '', /invalid spec for .*busybox:1\.0: version must be a whole number >= 0, got -1/);
    assert.equal(tagStatusOf(s.status!, image, '2.0')?.phase, 'Succeeded');
  });

  it('pulls from the auth registry only with a secret in kruise-daemon-config; a missing one is skipped and named', async () => {
    const image = `${cluster.authRegistry}/test/busybox`;
    await emptyNodeImage(cluster.admin, node);
    await removeImages(cri, [image + ':1.0', `${reg}/test/busybox:1.0`]);
    await setNodeImageSpec(cluster.admin, node, {
      images: { [image]: { tags: [{ tag: '1.0', version: 0, pullPolicy: policy() }] } },
    });
    let s = await waitForStatus(cluster.admin, node, (st) => tagStatusOf(st, image, '1.0')?.phase === 'Failed');
    const noSecret = tagStatusOf(s.status!, image, '1.0')!.message ?? '';
    // containerd 1.6: "401 Unauthorized"; containerd 2.4: "authorization failed: no basic auth credentials"
    assert.match(noSecret, /401|unauthorized|authentication|authorization failed/i);
    assert.match(noSecret, new RegExp(`no pull secret gave credentials for registry ${cluster.authRegistry}`));

    // named but not there (a copy the controller deleted): skipped, the pull goes on anonymously and says so
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [image]: {
          pullSecrets: [{ namespace: DAEMON_CONFIG_NAMESPACE, name: SECRET }],
          tags: [{ tag: '1.0', version: 1, pullPolicy: policy() }],
        },
      },
    });
    s = await waitForStatus(cluster.admin, node, (st) => {
      const t = tagStatusOf(st, image, '1.0');
      return t?.version === 1 && t.phase === 'Failed';
    });
    const skipped = tagStatusOf(s.status!, image, '1.0')!.message ?? '';
    assert.match(skipped, /no pull secret gave credentials/);
    assert.match(skipped, new RegExp(`pull secret ${DAEMON_CONFIG_NAMESPACE}/${SECRET} not found, skipped`));
    assert.ok(
      agent().logs.some(
        (l) =>
          l.msg === 'pull secret not found; pulling without it' && l.secret === `${DAEMON_CONFIG_NAMESPACE}/${SECRET}`,
      ),
      'a warning names the missing secret',
    );

    await cluster.admin.create(
      CoreResources.secrets,
      { ...dockerConfigSecret(SECRET, cluster.authRegistry, cluster.authUser, cluster.authPassword) },
      { namespace: DAEMON_CONFIG_NAMESPACE },
    );
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [image]: {
          pullSecrets: [{ namespace: DAEMON_CONFIG_NAMESPACE, name: SECRET }],
          tags: [{ tag: '1.0', version: 2, pullPolicy: policy() }],
        },
      },
    });
    s = await waitForStatus(cluster.admin, node, (st) => {
      const t = tagStatusOf(st, image, '1.0');
      return t?.version === 2 && t.phase === 'Succeeded';
    });
    assert.deepEqual(
      { desired: s.status!.desired, succeeded: s.status!.succeeded, failed: s.status!.failed },
      { desired: 1, succeeded: 1, failed: 0 },
    );
    // nothing skipped: no message, or only the pin note of a runtime without pins (CRI-O)
    const message = tagStatusOf(s.status!, image, '1.0')?.message;
    assert.ok(message === undefined || /^not pinned: /.test(message), `nothing skipped: ${message}`);
    const logs = JSON.stringify(agent().logs);
    assert.ok(!logs.includes(cluster.authPassword), 'the password never appears in the logs');
  });

  it('fails a missing tag after backoffLimit+1 attempts', async () => {
    const since = Date.now();
    const image = `${reg}/test/busybox`;
    await setNodeImageSpec(cluster.admin, node, { images: {} });
    await waitForStatus(cluster.admin, node, (st) => st.desired === 0);
    const before = await pullImageCalls(base);
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [image]: {
          tags: [
            {
              tag: 'no-such-tag',
              version: 0,
              pullPolicy: policy({ backoffLimit: 2 }),
              ownerReferences: [
                {
                  apiVersion: 'apps.kruise.io/v1beta1',
                  kind: 'ImagePullJob',
                  namespace: NS,
                  name: 'job-a',
                  uid: 'u-a',
                },
              ],
            },
          ],
        },
      },
    });
    const s = await waitForStatus(
      cluster.admin,
      node,
      (st) => tagStatusOf(st, image, 'no-such-tag')?.phase === 'Failed',
    );
    const t = tagStatusOf(s.status!, image, 'no-such-tag')!;
    assert.match(t.message ?? '', /not found/);
    assert.equal((await pullImageCalls(base)) - before, 3, 'backoffLimit 2 = 3 attempts');
    await waitFor(
      async () =>
        (await eventsSince(cluster.admin, NS, since)).some(
          (e) =>
            e.reason === 'PullImageFailed' &&
            e.involvedObject.kind === 'ImagePullJob' &&
            e.involvedObject.name === 'job-a' &&
            /no-such-tag/.test(e.message ?? ''),
        ),
      { message: 'a PullImageFailed event on the ImagePullJob named in ownerReferences' },
    );
  });

  it('re-pulls on a version bump and drops the status of a removed tag', async () => {
    const image = `${reg}/test/busybox`;
    const tags = (v1: number, with2: boolean) => ({
      images: {
        [image]: {
          tags: [
            { tag: '1.0', version: v1, pullPolicy: policy() },
            ...(with2 ? [{ tag: '2.0', version: 0, pullPolicy: policy() }] : []),
          ],
        },
      },
    });
    await setNodeImageSpec(cluster.admin, node, tags(0, true));
    await waitForStatus(cluster.admin, node, (st) => st.succeeded === 2 && st.desired === 2);
    const before = await pullImageCalls(base);
    await setNodeImageSpec(cluster.admin, node, tags(1, true));
    const bumped = await waitForStatus(
      cluster.admin,
      node,
      (st) => tagStatusOf(st, image, '1.0')?.version === 1 && tagStatusOf(st, image, '1.0')?.phase === 'Succeeded',
    );
    assert.equal((await pullImageCalls(base)) - before, 1, 'only the bumped tag is pulled again');
    assert.equal(tagStatusOf(bumped.status!, image, '2.0')?.phase, 'Succeeded');

    await setNodeImageSpec(cluster.admin, node, tags(1, false));
    const removed = await waitForStatus(
      cluster.admin,
      node,
      (st) => st.desired === 1 && !tagStatusOf(st, image, '2.0'),
    );
    assert.deepEqual(
      removed.status!.imageStatuses?.[image]?.tags.map((t) => t.tag),
      ['1.0'],
    );
    assert.equal(removed.status!.succeeded, 1);
  });

  it('timeoutSeconds and activeDeadlineSeconds cut pulls from a registry that stalls', async () => {
    const proxy = await stallingProxy();
    const image = `${proxy.host}/test/busybox`;
    await emptyNodeImage(cluster.admin, node);
    await removeImages(cri, [`${reg}/test/busybox:1.0`, `${reg}/test/busybox:2.0`]);
    proxy.stallBlobs = true;
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [image]: {
          tags: [
            { tag: '1.0', version: 0, pullPolicy: policy({ timeoutSeconds: 2, backoffLimit: 0 }) },
            {
              tag: '2.0',
              version: 0,
              pullPolicy: policy({ timeoutSeconds: 60, backoffLimit: 3, activeDeadlineSeconds: 3 }),
            },
          ],
        },
      },
    });
    const s = await waitForStatus(cluster.admin, node, (st) => st.failed === 2, { message: 'both slow tags Failed' });
    assert.match(
      tagStatusOf(s.status!, image, '1.0')!.message ?? '',
      /timed out after 2s \(pullPolicy\.timeoutSeconds\)/,
    );
    assert.match(tagStatusOf(s.status!, image, '2.0')!.message ?? '', /exceeds the activeDeadlineSeconds \(3s\)/);
    assert.ok(proxy.blobRequests() > 0, 'the pulls reached the blobs');
  });

  it('stops a tag removed while it is pulling: the pull is cancelled and its status goes', async () => {
    const proxy = await stallingProxy();
    const image = `${proxy.host}/test/busybox`;
    await emptyNodeImage(cluster.admin, node);
    await removeImages(cri, [`${reg}/test/busybox:2.0`]);
    proxy.stallBlobs = true;
    await setNodeImageSpec(cluster.admin, node, {
      images: { [image]: { tags: [{ tag: '2.0', version: 5, pullPolicy: policy({ timeoutSeconds: 120 }) }] } },
    });
    await waitForStatus(cluster.admin, node, (st) => tagStatusOf(st, image, '2.0')?.phase === 'Pulling');
    await waitFor(() => proxy.stalled() > 0, { message: 'a blob request held by the proxy' });
    await setNodeImageSpec(cluster.admin, node, { images: {} });
    const emptied = await waitForStatus(cluster.admin, node, (st) => st.desired === 0 && !st.imageStatuses);
    assert.deepEqual(
      [emptied.status!.pulling, emptied.status!.waiting, emptied.status!.succeeded, emptied.status!.failed],
      [0, 0, 0, 0],
    );
    await waitFor(() => proxy.stalled() === 0, { message: 'the runtime to give up the stalled blob request' });
  });

  it('after SIGKILL mid-pull, a new agent converges and pulls only the tag that was in flight', async () => {
    const proxy = await stallingProxy();
    const direct = `${reg}/test/busybox`;
    const stalled = `${proxy.host}/test/busybox`;
    await emptyNodeImage(cluster.admin, node);
    await removeImages(cri, [`${direct}:1.0`, `${direct}:2.0`]);
    proxy.stallBlobs = true;
    await setNodeImageSpec(cluster.admin, node, {
      images: {
        [direct]: { tags: [{ tag: '2.0', version: 0, pullPolicy: policy() }] },
        // version 1: the previous test left version 0 of this tag Failed (completed, so never pulled again)
        [stalled]: { tags: [{ tag: '1.0', version: 1, pullPolicy: policy({ timeoutSeconds: 120 }) }] },
      },
    });
    const mid = await waitForStatus(
      cluster.admin,
      node,
      (st) =>
        tagStatusOf(st, direct, '2.0')?.phase === 'Succeeded' && tagStatusOf(st, stalled, '1.0')?.phase === 'Pulling',
    );
    await waitFor(() => proxy.stalled() > 0, { message: 'a blob request held by the proxy' });
    const completed = tagStatusOf(mid.status!, direct, '2.0')!;

    agent().child.kill('SIGKILL');
    assert.deepEqual(await agent().exited, { code: null, signal: 'SIGKILL' });
    proxy.stallBlobs = false;
    base = (await system.startAgent(cluster.nodes[0]!)).url;

    const after = await waitForStatus(cluster.admin, node, (st) => st.succeeded === 2, {
      message: 'both tags Succeeded',
    });
    assert.deepEqual(tagStatusOf(after.status!, direct, '2.0'), completed, 'the completed tag is left as it was');
    assert.equal(await pullImageCalls(base), 1, 'the new agent pulled only the tag that was in flight');
  });
});
