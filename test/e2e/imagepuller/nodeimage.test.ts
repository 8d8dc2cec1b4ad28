// The image puller end to end: the agent as a real process (NODE_NAME, KUBECONFIG, RUNTIME_SOCKET) against the
// API emulator with deploy/crds and the local cluster's real containerd and registries.
import assert from 'node:assert/strict';
import { clusterPaths } from '../../cluster/paths.js';
import { CoreResources } from '../../../src/kube/resource.js';
import type { KubeObject } from '../../../src/kube/object.js';
import type { ImageTagPullPolicy } from '../../../src/api/nodeimage.js';
import { AgentProcess, httpGet } from '../../component/daemon/agent-process.js';
import {
  agentCounter,
  applyCrds,
  dockerConfigSecret,
  pullImageCalls,
  removeImages,
  setNodeImageSpec,
  startImagePullerEnv,
  startPuller,
  tagStatusOf,
  waitForStatus,
  DAEMON_CONFIG_NAMESPACE,
  type ImagePullerEnv,
} from '../../support/imagepuller-env.js';
import { startRegistryProxy, writeContainerdHosts, type RegistryProxy } from '../../support/registry-proxy.js';
import { waitFor } from '../../support/wait.js';

const NODE = 'e2e-imagepuller-node';

interface CoreEvent extends KubeObject {
  reason: string;
  message: string;
  type: string;
  involvedObject: { kind: string; name: string; namespace?: string };
}

function policy(p: ImageTagPullPolicy = {}): ImageTagPullPolicy {
  return { timeoutSeconds: 60, backoffLimit: 0, ttlSecondsAfterFinished: 300, ...p };
}

describe('imagepuller e2e: NodeImage on a real containerd', function () {
  this.timeout(120_000);
  let env: ImagePullerEnv;
  let agent: AgentProcess;
  let base: string;
  let reg: string;
  let proxy: RegistryProxy | undefined;
  let removeHosts: (() => Promise<void>) | undefined;

  before(async () => {
    env = await startImagePullerEnv({ applyCrds: false });
    reg = env.cluster.registry;
    agent = startPuller(env, NODE);
    base = await agent.baseUrl();
  });

  after(async () => {
    await agent?.stop();
    await removeHosts?.();
    await proxy?.close();
    await env?.close();
  });

  let crdsApplied = false;
  beforeEach(async function () {
    // the /healthz test applies the CRDs itself (it checks the agent before they exist); any other test first
    if (this.currentTest?.title.startsWith('/healthz') || crdsApplied) return;
    await applyCrds(env);
    crdsApplied = true;
  });

  afterEach(async () => {
    if (proxy) proxy.stallBlobs = false;
  });

  async function startProxy(): Promise<RegistryProxy> {
    if (!proxy) {
      proxy = await startRegistryProxy(reg);
      removeHosts = await writeContainerdHosts(clusterPaths(env.cluster.dir).containerd.certsDir, proxy.host);
    }
    return proxy;
  }

  it('/healthz fails until the NodeImage informer has synced (no CRDs yet), then passes', async () => {
    const unhealthy = await waitFor(
      async () => {
        const r = await httpGet(`${base}/healthz?verbose`);
        return r.status === 500 && /nodeImageInformerSynced failed: .*not synced/.test(r.body) ? r : undefined;
      },
      { message: '/healthz 500 naming nodeImageInformerSynced' },
    );
    assert.match(unhealthy.body, /\[-\]nodeImageInformerSynced failed: .*not synced/);
    await applyCrds(env);
    crdsApplied = true;
    const healthy = await waitFor(
      async () => {
        const r = await httpGet(`${base}/healthz?verbose`);
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 40_000, message: '/healthz 200 after the CRDs exist' },
    );
    assert.match(healthy.body, /\[\+\]nodeImageInformerSynced ok/);
  });

  it('converges several images and tags with statuses, counters and events; a bad reference fails alone', async () => {
    const busybox = `${reg}/test/busybox`;
    const pause = `${reg}/test/pause`;
    await removeImages(env.cri, [`${busybox}:1.0`, `${busybox}:2.0`, `${pause}:3.9`]);
    await setNodeImageSpec(env.client, NODE, {
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
    const done = await waitForStatus(env.client, NODE, (s) => s.succeeded === 3 && s.failed === 2, {
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
      const onNode = await env.cri.imageStatus({ image: { image: `${image}:${tag}` } });
      assert.equal(`${image}@${onNode.image?.id}`, t.imageID, 'the image is on the node with that id');
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

    const events = await waitFor(
      async () => {
        const list = await env.client.list<CoreEvent>(CoreResources.events, { namespace: 'default' });
        const mine = list.items.filter((e) => e.involvedObject.name === NODE);
        return mine.filter((e) => e.reason === 'PullImageSucceed').length >= 3 ? mine : undefined;
      },
      { message: 'PullImageSucceed events on the NodeImage' },
    );
    assert.ok(events.some((e) => e.reason === 'PullImageFailed' && e.type === 'Warning' && /Bad_Name/.test(e.message)));
  });

  it('fails only the tag whose spec the schema let through with a bad value (version -1)', async () => {
    const image = `${reg}/test/busybox`;
    await setNodeImageSpec(env.client, NODE, {
      images: {
        [image]: {
          tags: [
            { tag: '1.0', version: -1, pullPolicy: policy() },
            { tag: '2.0', version: 0, pullPolicy: policy(), imagePullPolicy: 'IfNotPresent' },
          ],
        },
      },
    });
    const s = await waitForStatus(env.client, NODE, (st) => st.failed === 1 && st.succeeded === 1);
    const bad = tagStatusOf(s.status!, image, '1.0')!;
    assert.equal(bad.phase, 'Failed');
    assert.match(bad.message ?? '', /invalid spec for .*busybox:1\.0: version must be a whole number >= 0, got -1/);
    assert.equal(tagStatusOf(s.status!, image, '2.0')?.phase, 'Succeeded');
  });

  it('pulls from the auth registry only with a secret in kruise-daemon-config, saying why otherwise', async () => {
    const image = `${env.cluster.authRegistry}/test/busybox`;
    await removeImages(env.cri, [image + ':1.0', `${reg}/test/busybox:1.0`]);
    await setNodeImageSpec(env.client, NODE, {
      images: { [image]: { tags: [{ tag: '1.0', version: 0, pullPolicy: policy() }] } },
    });
    let s = await waitForStatus(env.client, NODE, (st) => tagStatusOf(st, image, '1.0')?.phase === 'Failed');
    const noSecret = tagStatusOf(s.status!, image, '1.0')!.message ?? '';
    assert.match(noSecret, /401|unauthorized|authentication/i);
    assert.match(noSecret, new RegExp(`no pull secret gave credentials for registry ${env.cluster.authRegistry}`));

    await setNodeImageSpec(env.client, NODE, {
      images: {
        [image]: {
          pullSecrets: [{ namespace: DAEMON_CONFIG_NAMESPACE, name: 'auth-pull' }],
          tags: [{ tag: '1.0', version: 1, pullPolicy: policy() }],
        },
      },
    });
    s = await waitForStatus(env.client, NODE, (st) => {
      const t = tagStatusOf(st, image, '1.0');
      return t?.version === 1 && t.phase === 'Failed';
    });
    assert.match(
      tagStatusOf(s.status!, image, '1.0')!.message ?? '',
      /pull secret kruise-daemon-config\/auth-pull not found/,
    );

    await env.client.create(
      CoreResources.secrets,
      dockerConfigSecret('auth-pull', env.cluster.authRegistry, env.cluster.authUser, env.cluster.authPassword),
    );
    await setNodeImageSpec(env.client, NODE, {
      images: {
        [image]: {
          pullSecrets: [{ namespace: DAEMON_CONFIG_NAMESPACE, name: 'auth-pull' }],
          tags: [{ tag: '1.0', version: 2, pullPolicy: policy() }],
        },
      },
    });
    s = await waitForStatus(env.client, NODE, (st) => {
      const t = tagStatusOf(st, image, '1.0');
      return t?.version === 2 && t.phase === 'Succeeded';
    });
    assert.deepEqual(
      { desired: s.status!.desired, succeeded: s.status!.succeeded, failed: s.status!.failed },
      {
        desired: 1,
        succeeded: 1,
        failed: 0,
      },
    );
    const logs = JSON.stringify(agent.logs);
    assert.ok(!logs.includes(env.cluster.authPassword), 'the password never appears in the logs');
  });

  it('fails a missing tag after backoffLimit+1 attempts', async () => {
    const image = `${reg}/test/busybox`;
    await setNodeImageSpec(env.client, NODE, { images: {} });
    await waitForStatus(env.client, NODE, (st) => st.desired === 0);
    const before = await pullImageCalls(base);
    await setNodeImageSpec(env.client, NODE, {
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
                  namespace: 'default',
                  name: 'job-a',
                  uid: 'u-a',
                },
              ],
            },
          ],
        },
      },
    });
    const s = await waitForStatus(env.client, NODE, (st) => tagStatusOf(st, image, 'no-such-tag')?.phase === 'Failed');
    const t = tagStatusOf(s.status!, image, 'no-such-tag')!;
    assert.match(t.message ?? '', /not found/);
    assert.equal((await pullImageCalls(base)) - before, 3, 'backoffLimit 2 = 3 attempts');
    await waitFor(
      async () => {
        const list = await env.client.list<CoreEvent>(CoreResources.events, { namespace: 'default' });
        return list.items.some(
          (e) =>
            e.reason === 'PullImageFailed' &&
            e.involvedObject.kind === 'ImagePullJob' &&
            e.involvedObject.name === 'job-a' &&
            /no-such-tag/.test(e.message),
        );
      },
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
    await setNodeImageSpec(env.client, NODE, tags(0, true));
    await waitForStatus(env.client, NODE, (st) => st.succeeded === 2 && st.desired === 2);
    const before = await pullImageCalls(base);
    await setNodeImageSpec(env.client, NODE, tags(1, true));
    const bumped = await waitForStatus(
      env.client,
      NODE,
      (st) => tagStatusOf(st, image, '1.0')?.version === 1 && tagStatusOf(st, image, '1.0')?.phase === 'Succeeded',
    );
    assert.equal((await pullImageCalls(base)) - before, 1, 'only the bumped tag is pulled again');
    assert.equal(tagStatusOf(bumped.status!, image, '2.0')?.phase, 'Succeeded');

    await setNodeImageSpec(env.client, NODE, tags(1, false));
    const removed = await waitForStatus(env.client, NODE, (st) => st.desired === 1 && !tagStatusOf(st, image, '2.0'));
    assert.deepEqual(
      removed.status!.imageStatuses?.[image]?.tags.map((t) => t.tag),
      ['1.0'],
    );
    assert.equal(removed.status!.succeeded, 1);
  });

  it('timeoutSeconds and activeDeadlineSeconds cut pulls from a registry that stalls', async () => {
    const slow = await startProxy();
    const image = `${slow.host}/test/busybox`;
    await removeImages(env.cri, [`${reg}/test/busybox:1.0`, `${reg}/test/busybox:2.0`]);
    slow.stallBlobs = true;
    await setNodeImageSpec(env.client, NODE, {
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
    const s = await waitForStatus(env.client, NODE, (st) => st.failed === 2, { message: 'both slow tags Failed' });
    assert.match(
      tagStatusOf(s.status!, image, '1.0')!.message ?? '',
      /timed out after 2s \(pullPolicy\.timeoutSeconds\)/,
    );
    assert.match(tagStatusOf(s.status!, image, '2.0')!.message ?? '', /exceeds the activeDeadlineSeconds \(3s\)/);
    assert.ok(slow.blobRequests() > 0, 'the pulls reached the blobs');
  });

  it('stops a tag removed while it is pulling: the pull is cancelled and its status goes', async () => {
    const slow = await startProxy();
    const image = `${slow.host}/test/busybox`;
    await removeImages(env.cri, [`${reg}/test/busybox:2.0`]);
    slow.stallBlobs = true;
    await setNodeImageSpec(env.client, NODE, {
      images: { [image]: { tags: [{ tag: '2.0', version: 5, pullPolicy: policy({ timeoutSeconds: 120 }) }] } },
    });
    await waitForStatus(env.client, NODE, (st) => tagStatusOf(st, image, '2.0')?.phase === 'Pulling');
    await waitFor(() => slow.stalled() > 0, { message: 'a blob request held by the proxy' });
    await setNodeImageSpec(env.client, NODE, { images: {} });
    const emptied = await waitForStatus(env.client, NODE, (st) => st.desired === 0 && !st.imageStatuses);
    assert.deepEqual(
      [emptied.status!.pulling, emptied.status!.waiting, emptied.status!.succeeded, emptied.status!.failed],
      [0, 0, 0, 0],
    );
    await waitFor(() => slow.stalled() === 0, { message: 'the runtime to give up the stalled blob request' });
  });

  it('after SIGKILL mid-pull, a new agent converges and pulls only the tag that was in flight', async () => {
    const slow = await startProxy();
    const direct = `${reg}/test/busybox`;
    const stalled = `${slow.host}/test/busybox`;
    await removeImages(env.cri, [`${direct}:1.0`, `${direct}:2.0`]);
    slow.stallBlobs = true;
    await setNodeImageSpec(env.client, NODE, {
      images: {
        [direct]: { tags: [{ tag: '2.0', version: 0, pullPolicy: policy() }] },
        // version 1: the previous test left version 0 of this tag Failed (completed, so never pulled again)
        [stalled]: { tags: [{ tag: '1.0', version: 1, pullPolicy: policy({ timeoutSeconds: 120 }) }] },
      },
    });
    const mid = await waitForStatus(
      env.client,
      NODE,
      (st) =>
        tagStatusOf(st, direct, '2.0')?.phase === 'Succeeded' && tagStatusOf(st, stalled, '1.0')?.phase === 'Pulling',
    );
    await waitFor(() => slow.stalled() > 0, { message: 'a blob request held by the proxy' });
    const completed = tagStatusOf(mid.status!, direct, '2.0')!;

    agent.child.kill('SIGKILL');
    assert.deepEqual(await agent.exited, { code: null, signal: 'SIGKILL' });
    slow.stallBlobs = false;
    agent = startPuller(env, NODE);
    base = await agent.baseUrl();

    const after = await waitForStatus(env.client, NODE, (st) => st.succeeded === 2, { message: 'both tags Succeeded' });
    assert.deepEqual(tagStatusOf(after.status!, direct, '2.0'), completed, 'the completed tag is left as it was');
    assert.equal(await pullImageCalls(base), 1, 'the new agent pulled only the tag that was in flight');
  });
});
