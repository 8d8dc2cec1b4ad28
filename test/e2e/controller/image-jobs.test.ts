// kruise-controller end to end on the real cluster: the controller as a real process with its ServiceAccount's
// token (kube-apiserver calls its admission webhooks over HTTPS, RBAC enforced; the pull-secret reader ClusterRole
// bound in the test's namespace), the real agent in each of the two nodes pulling through the node's containerd from
// the cluster's registries; a registry proxy of ours refuses the second node's pulls of one image.
import assert from 'node:assert/strict';
import { ApiError, isNotFound } from '../../../src/kube/errors.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { IMAGE_LIST_PULL_JOBS } from '../../../src/api/imagelistpulljob.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import { NODE_IMAGES, type NodeImage } from '../../../src/api/nodeimage.js';
import { MUTATING_WEBHOOK_CONFIGURATIONS, type SecretObject } from '../../../src/controller/resources.js';
import {
  MUTATING_CONFIGURATION_NAME,
  type WebhookConfiguration,
} from '../../../src/controller/admission/configurations.js';
import { httpGet } from '../../component/daemon/agent-process.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import {
  freshNamespace,
  grantPullSecretReader,
  nodeRegistryProxy,
  removeNamespace,
  splitReference as split,
  type NodeRegistryProxy,
} from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';
import { getJob, getListJob, getNodeImage, waitForJob } from './controller-env.js';
import { errorMessage } from '../../../src/util/error-message.js';

const NS = 'e2e-image-jobs';
const REG = 'registry.invalid:5000';

function job(name: string, spec: Partial<ImagePullJob['spec']> & { image: string }): ImagePullJob {
  return {
    metadata: { name, namespace: NS },
    spec: { completionPolicy: {}, parallelism: 3, ...spec },
  };
}

function tagOf(ni: NodeImage | undefined, image: string, tag: string) {
  return ni?.spec?.images?.[image]?.tags.find((t) => t.tag === tag);
}

describe('kruise-controller e2e: image jobs on the real cluster', function () {
  this.timeout(240_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let refusing: NodeRegistryProxy;
  let NODES: string[];
  /** The first node, in name order (jobs fill nodes in that order). */
  let REAL_NODE: string;
  const client = () => cluster.admin;
  const controller = () => system.controller!;

  before(async () => {
    cluster = await useRealCluster();
    NODES = cluster.nodes.map((n) => n.name);
    REAL_NODE = NODES[0]!;
    await freshNamespace(client(), NS);
    await grantPullSecretReader(client(), NS);
    // the NodeImages are made by this run's controller, from the Nodes (a kept cluster may hold earlier ones)
    for (const node of NODES) {
      await client()
        .delete(NODE_IMAGES, node)
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
    }
    refusing = await nodeRegistryProxy(cluster);
    refusing.proxy.refuseFrom.add(cluster.nodes[1]!.ip);
    system = await startSystem(cluster, { controllerArgs: ['--nodeimage-creation-delay', '1s'] });
  });

  after(async () => {
    // while the controller runs, so it lets its jobs go (removeNamespace strips what a dead one left)
    if (cluster) await removeNamespace(client(), NS);
    await system?.stop();
    await refusing?.close();
  });

  it('creates one NodeImage per Ready Node, with the Node labels', async () => {
    for (const node of NODES) {
      const ni = await waitFor(() => getNodeImage(client(), node), {
        timeoutMs: 30_000,
        message: `NodeImage ${node}`,
      });
      assert.equal(ni.metadata.labels?.['kubernetes.io/hostname'], node);
      assert.equal(ni.metadata.labels?.['kubernetes.io/os'], 'linux', "the real kubelet's labels are copied");
    }
  });

  it('writes its webhook configurations with a caBundle and defaults jobs through the mutating webhook', async () => {
    const allowed = async (): Promise<number> =>
      Number(
        /^kruise_controller_webhook_requests_total\{path="\/mutate-apps-kruise-io-imagepulljob",allowed="true"\} (\d+)$/m.exec(
          await controller().metrics(),
        )?.[1] ?? 0,
      );
    const before = await allowed();
    const config = await client().get<WebhookConfiguration>(
      MUTATING_WEBHOOK_CONFIGURATIONS,
      MUTATING_CONFIGURATION_NAME,
    );
    assert.ok(
      (config.webhooks ?? []).every((w) => (w.clientConfig.caBundle ?? '').length > 0),
      'every webhook has a caBundle',
    );
    const created = await client().create<ImagePullJob>(
      IMAGE_PULL_JOBS,
      job('defaults', { image: `${REG}/x/defaults:1`, parallelism: 0 }),
    );
    assert.equal(created.spec.imagePullPolicy, 'IfNotPresent');
    assert.equal(created.spec.completionPolicy.type, 'Always');
    assert.deepEqual(created.spec.pullPolicy, { timeoutSeconds: 600, backoffLimit: 3 });
    assert.ok((await allowed()) > before, 'kube-apiserver called the mutating webhook');
    await client().delete(IMAGE_PULL_JOBS, 'defaults', { namespace: NS });
  });

  it('denies invalid jobs through the validating webhook, naming the field', async () => {
    const cases: [ImagePullJob, RegExp][] = [
      [job('bad-image', { image: 'Invalid:Image:x' }), /spec\.image: invalid image/],
      [
        job('bad-par', { image: `${REG}/x/a:1`, parallelism: -1 }),
        /spec\.parallelism: Invalid value: -1: parallelism must be non-negative/,
      ],
      [
        job('bad-never', { image: `${REG}/x/a:1`, completionPolicy: { type: 'Never', ttlSecondsAfterFinished: 5 } }),
        /activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType/,
      ],
      [
        job('bad-sel', { image: `${REG}/x/a:1`, selector: { names: ['a'], matchLabels: { a: 'b' } } }),
        /can not set both names and labelSelector in this spec.selector/,
      ],
    ];
    for (const [obj, message] of cases) {
      await assert.rejects(client().create(IMAGE_PULL_JOBS, obj), (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.match(err.message, /admission webhook "vimagepulljob.kb.io" denied the request: /);
        assert.match(err.message, message);
        return true;
      });
    }
    await assert.rejects(
      client().create(IMAGE_LIST_PULL_JOBS, {
        metadata: { name: 'bad-list', namespace: NS },
        spec: { images: [`${REG}/x/a:1`, `${REG}/x/a:1`], completionPolicy: {} },
      }),
      /admission webhook "vimagelistpulljob.kb.io" denied the request: .*spec\.images.*duplicate/,
    );
  });

  it('runs an Always job on all nodes to completion, deletes it after its TTL and collects its tags', async () => {
    const ref = cluster.images.busybox1;
    const { image, tag: t } = split(ref);
    await client().create(
      IMAGE_PULL_JOBS,
      job('always', { image: ref, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 2 } }),
    );
    const done = await waitForJob(client(), NS, 'always', (j) => !!j.status?.completionTime);
    assert.equal(done.status?.desired, 2);
    assert.equal(done.status?.succeeded, 2);
    assert.equal(done.status?.message, 'job has completed');
    for (const node of NODES) {
      const ni = await getNodeImage(client(), node);
      const tag = tagOf(ni, image, t);
      assert.ok(tag, `tag on ${node}`);
      assert.equal(tag.ownerReferences?.[0]?.name, 'always');
      assert.equal(tag.imagePullPolicy, 'IfNotPresent');
      assert.ok(tag.pullPolicy?.ttlSecondsAfterFinished && tag.pullPolicy.ttlSecondsAfterFinished >= 302);
    }
    await waitFor(async () => !(await getJob(client(), NS, 'always')), {
      timeoutMs: 20_000,
      message: 'the job to go after its TTL',
    });
    for (const node of NODES) {
      await waitFor(async () => !tagOf(await getNodeImage(client(), node), image, t), {
        timeoutMs: 20_000,
        message: `tag collected on ${node}`,
      });
    }
  });

  it('runs a job on the nodes it names only, and reports failed nodes', async () => {
    // through the proxy, which answers the second node's manifest requests 404; Always: the registry is asked
    const { image, tag: t } = split(cluster.images.busybox1.replace(cluster.registry, refusing.proxy.host));
    await client().create(
      IMAGE_PULL_JOBS,
      job('by-names', {
        image: `${image}:${t}`,
        imagePullPolicy: 'Always',
        pullPolicy: { timeoutSeconds: 60, backoffLimit: 0 },
        selector: { names: [...NODES, 'no-such-node'] },
      }),
    );
    const done = await waitForJob(client(), NS, 'by-names', (j) => !!j.status?.completionTime);
    assert.equal(done.status?.desired, 2, 'a name without a NodeImage is not counted');
    assert.equal(done.status?.succeeded, 1);
    assert.equal(done.status?.failed, 1);
    assert.deepEqual(done.status?.failedNodes, [NODES[1]]);
    const failed = (await getNodeImage(client(), NODES[1]!))?.status?.imageStatuses?.[image]?.tags.find(
      (x) => x.tag === t,
    );
    assert.match(failed?.message ?? '', /not found/, 'the agent says why');
  });

  it('keeps a Never job running once every node has the image', async () => {
    const ref = cluster.images.busybox2;
    const { image, tag: t } = split(ref);
    await client().create(IMAGE_PULL_JOBS, job('never', { image: ref, completionPolicy: { type: 'Never' } }));
    const j = await waitForJob(client(), NS, 'never', (x) => x.status?.succeeded === 2);
    assert.equal(j.status?.completionTime, undefined);
    assert.equal(j.status?.message, 'job is running, progress 100.0%');
    const tag = tagOf(await getNodeImage(client(), REAL_NODE), image, t);
    assert.ok(tag?.pullPolicy?.ttlSecondsAfterFinished && tag.pullPolicy.ttlSecondsAfterFinished >= 86_400 - 600);
    // every attempt of the default policy (4 of 600 s, waits 1 + 2 + 4 s), not OpenKruise's max(1800, timeout) (#2071)
    assert.equal(tag?.pullPolicy?.activeDeadlineSeconds, 2407);
    // OpenKruise #2221: an edited imagePullPolicy reaches the job's tags
    await client().patch(
      IMAGE_PULL_JOBS,
      'never',
      { spec: { imagePullPolicy: 'Always' } },
      { type: 'merge', namespace: NS },
    );
    for (const node of NODES) {
      await waitFor(async () => tagOf(await getNodeImage(client(), node), image, t)?.imagePullPolicy === 'Always', {
        message: `the edited pull policy on ${node}`,
      });
    }
    await client().delete(IMAGE_PULL_JOBS, 'never', { namespace: NS });
    await waitFor(async () => !(await getJob(client(), NS, 'never')), {
      message: 'the Never job to be deleted (finalizer released)',
    });
  });

  it('loses nothing when the controller is restarted mid-job', async () => {
    const ref = cluster.vars.SANDBOX_IMAGE!; // on every node already
    const { image, tag: t } = split(ref);
    await client().create(
      IMAGE_PULL_JOBS,
      // a TTL long enough to see the job finished: with the image on every node, the old controller may finish
      // it before it is killed, and a 1 s TTL let the new one delete it before this test looked (2 of 12 full runs)
      job('restart', { image: ref, parallelism: 1, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 60 } }),
    );
    // nodes are filled in name order: the real agent's node first
    const first = await waitFor(async () => tagOf(await getNodeImage(client(), REAL_NODE), image, t), {
      message: 'the first node to get the tag',
    });
    await controller().kill();
    await system.startController();
    const done = await waitForJob(client(), NS, 'restart', (j) => !!j.status?.completionTime).catch((err: unknown) => {
      // show what the new controller did
      const lines = controller()
        .logs.slice(-40)
        .map((l) => JSON.stringify(l));
      throw new Error(`${errorMessage(err)}\nthe restarted controller's last lines:\n${lines.join('\n')}`);
    });
    assert.equal(done.status?.succeeded, 2);
    for (const node of NODES) {
      const ni = await getNodeImage(client(), node);
      const tag = tagOf(ni, image, t);
      assert.equal(tag?.ownerReferences?.length, 1, `one owner on ${node}`);
      const reported = ni?.status?.imageStatuses?.[image]?.tags.find((x) => x.tag === t);
      assert.equal(reported?.phase, 'Succeeded');
      assert.equal(reported?.version, tag?.version);
      if (node === REAL_NODE) assert.equal(tag?.version, first.version, 'the tag written before the restart is kept');
    }
    assert.deepEqual(
      (await client().list<NodeImage>(NODE_IMAGES)).items.map((n) => n.metadata.name).sort(),
      NODES,
      'one NodeImage per Node, none made twice',
    );
    await client().delete(IMAGE_PULL_JOBS, 'restart', { namespace: NS });
    for (const node of NODES) {
      await waitFor(async () => !tagOf(await getNodeImage(client(), node), image, t), {
        timeoutMs: 20_000,
        message: `the restart job's tag collected on ${node}`,
      });
    }
  });

  it('lets two jobs on the same image:tag share the tag and both complete', async () => {
    const ref = cluster.vars.SANDBOX_IMAGE!;
    const { image, tag: t } = split(ref);
    await client().create(IMAGE_PULL_JOBS, job('shared-1', { image: ref }));
    await client().create(IMAGE_PULL_JOBS, job('shared-2', { image: ref, imagePullPolicy: 'Always' }));
    const [a, b] = await Promise.all([
      waitForJob(client(), NS, 'shared-1', (j) => !!j.status?.completionTime),
      waitForJob(client(), NS, 'shared-2', (j) => !!j.status?.completionTime),
    ]);
    assert.equal(a.status?.succeeded, 2);
    assert.equal(b.status?.succeeded, 2);
    for (const node of NODES) {
      const tag = tagOf(await getNodeImage(client(), node), image, t);
      assert.deepEqual(tag?.ownerReferences?.map((o) => o.name).sort(), ['shared-1', 'shared-2']);
    }
  });

  it('pulls from the auth registry through a copied pull secret; the copy and the references go with the job', async () => {
    const auth = Buffer.from(`${cluster.authUser}:${cluster.authPassword}`).toString('base64');
    await client().create<SecretObject>(CoreResources.secrets, {
      metadata: { name: 'regcred', namespace: NS },
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [cluster.authRegistry]: { auth } } })).toString(
          'base64',
        ),
      },
    });
    const ref = cluster.images.authBusybox1;
    const { image, tag: t } = split(ref);
    // paused (parallelism 0) first: the copy is made while the job runs
    await client().create(
      IMAGE_PULL_JOBS,
      job('with-secret', { image: ref, pullSecrets: ['regcred'], parallelism: 0, imagePullPolicy: 'Always' }),
    );
    const copyOf = async (): Promise<SecretObject | undefined> =>
      (await client().list<SecretObject>(CoreResources.secrets, { namespace: 'kruise-daemon-config' })).items.find(
        (s) => s.metadata?.annotations?.['imagepulljobs.kruise.io/source-key'] === `${NS}/regcred`,
      );
    const copy = await waitFor(copyOf, { message: 'the copy of regcred' });
    assert.equal(copy.metadata?.annotations?.['imagepulljobs.kruise.io/references'], `${NS}/with-secret`);
    assert.equal(copy.type, 'kubernetes.io/dockerconfigjson');
    await client().patch(
      IMAGE_PULL_JOBS,
      'with-secret',
      { spec: { parallelism: 3 } },
      { type: 'merge', namespace: NS },
    );
    const running = await waitFor(
      async () => (await getNodeImage(client(), REAL_NODE))?.spec?.images?.[image]?.pullSecrets,
      { message: 'the reference to the copy in the NodeImage' },
    );
    assert.deepEqual(running, [{ namespace: 'kruise-daemon-config', name: copy.metadata?.name, mode: 'batch' }]);
    const done = await waitForJob(client(), NS, 'with-secret', (j) => !!j.status?.completionTime);
    assert.equal(done.status?.succeeded, 2, JSON.stringify(done.status));
    for (const node of NODES) {
      const pulled = (await getNodeImage(client(), node))?.status?.imageStatuses?.[image]?.tags.find(
        (x) => x.tag === t,
      );
      assert.equal(pulled?.phase, 'Succeeded', `the real agent on ${node} pulled with the copied secret`);
    }
    await waitFor(async () => !(await copyOf()), { message: 'the copy to go once no running job references it' });
    // The completed job's tag stays (until its TTL), and with it the image entry: the reference to the deleted copy
    // goes from it, so a later pull of the image does not name a secret that no longer exists.
    for (const node of NODES) {
      const entry = await waitFor(
        async () => {
          const e = (await getNodeImage(client(), node))?.spec?.images?.[image];
          return e && !e.pullSecrets ? e : undefined;
        },
        { message: `the reference to the deleted copy dropped on ${node}` },
      );
      assert.ok(
        entry.tags.some((x) => x.tag === t),
        `the job's tag is still on ${node}`,
      );
    }
  });

  it('follows a rotated pull secret: a pull failing with the old password succeeds once the source is fixed', async () => {
    const dockerConfig = (password: string): Record<string, string> => {
      const auth = Buffer.from(`${cluster.authUser}:${password}`).toString('base64');
      const json = JSON.stringify({ auths: { [cluster.authRegistry]: { auth } } });
      return { '.dockerconfigjson': Buffer.from(json).toString('base64') };
    };
    await client().create<SecretObject>(CoreResources.secrets, {
      metadata: { name: 'rotated', namespace: NS },
      type: 'kubernetes.io/dockerconfigjson',
      data: dockerConfig('not-the-password'),
    });
    const agentUrl = system.agents.get(REAL_NODE)!.url;
    const failedAttempts = async (): Promise<number> => {
      const { body } = await httpGet(`${agentUrl}/metrics`);
      return Number(/^kruise_daemon_image_pull_attempts_total\{outcome="error"\} (\d+)$/m.exec(body)?.[1] ?? NaN);
    };
    const failedBefore = await failedAttempts();
    const ref = cluster.images.authBusybox1;
    const { image, tag: t } = split(ref);
    // A NodeImage's pull secrets are per image, shared by every job on it: the earlier job's (good) copy must not be
    // there. Deleting that job collects its tag, and with the last tag the image entry and its references go.
    await client()
      .delete(IMAGE_PULL_JOBS, 'with-secret', { namespace: NS })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    await waitFor(async () => !(await getNodeImage(client(), REAL_NODE))?.spec?.images?.[image], {
      message: `no earlier job's tag of ${image} on ${REAL_NODE}`,
    });
    // On the real agent's node only. Always: the image may be there already, the registry is asked anyway. Six
    // attempts, 1+2+4+8+16 s apart.
    await client().create(
      IMAGE_PULL_JOBS,
      job('rotated', {
        image: ref,
        pullSecrets: ['rotated'],
        selector: { names: [REAL_NODE] },
        imagePullPolicy: 'Always',
        pullPolicy: { timeoutSeconds: 60, backoffLimit: 5 },
      }),
    );
    await waitFor(async () => (await failedAttempts()) > failedBefore, {
      timeoutMs: 30_000,
      message: "the real agent's pull to fail with the wrong password",
    });
    // The controller settled (no reconcile for half a second): no event of the job or its NodeImage is on its way,
    // so only the watch of the source can carry the fix into the copy before the agent's attempts run out.
    await controller().settled('imagepulljob');
    const jobBefore = await getJob(client(), NS, 'rotated');
    const source = await client().get<SecretObject>(CoreResources.secrets, 'rotated', { namespace: NS });
    await client().update(CoreResources.secrets, { ...source, data: dockerConfig(cluster.authPassword) });
    // Nothing touches the job: the copy follows its source, the agent reads the copy again at its next attempt.
    const done = await waitForJob(client(), NS, 'rotated', (j) => !!j.status?.completionTime, 90_000);
    assert.equal(done.status?.succeeded, 1, JSON.stringify(done.status));
    assert.equal(done.status?.failed ?? 0, 0);
    assert.equal(done.metadata.generation, jobBefore?.metadata.generation);
    const ni = await getNodeImage(client(), REAL_NODE);
    const pulled = ni?.status?.imageStatuses?.[image]?.tags.find((x) => x.tag === t);
    assert.equal(pulled?.phase, 'Succeeded', JSON.stringify(pulled));
    const other = await getNodeImage(client(), NODES[1]!);
    assert.ok(
      !other?.spec?.images?.[image]?.tags.some((x) => x.ownerReferences?.some((o) => o.name === 'rotated')),
      'a job naming one node writes nothing into the others',
    );
  });

  it('runs an ImageListPullJob of two images to completion', async () => {
    const images = [cluster.images.busybox1, cluster.images.busybox2];
    await client().create(IMAGE_LIST_PULL_JOBS, {
      metadata: { name: 'list', namespace: NS },
      spec: { images, parallelism: 3, completionPolicy: { type: 'Always' } },
    });
    const done = await waitFor(
      async () => {
        const l = await getListJob(client(), NS, 'list');
        return l?.status?.completionTime ? l : undefined;
      },
      { timeoutMs: 60_000, message: 'the ImageListPullJob to complete' },
    );
    assert.equal(done.status?.desired, 2);
    assert.equal(done.status?.completed, 2);
    assert.equal(done.status?.succeeded, 2);
    const children = (await client().list<ImagePullJob>(IMAGE_PULL_JOBS, { namespace: NS })).items.filter((j) =>
      j.metadata.ownerReferences?.some((o) => o.uid === done.metadata.uid),
    );
    assert.deepEqual(children.map((c) => c.spec.image).sort(), [...images].sort());
  });
  it('replaces the children of an ImageListPullJob when its template changes', async () => {
    const images = [cluster.images.busybox1, cluster.images.busybox2];
    await client().create(IMAGE_LIST_PULL_JOBS, {
      metadata: { name: 'list-edit', namespace: NS },
      // a TTL the test can see the job finished within (with 1 s it was once gone before a loaded machine's GET)
      spec: { images, parallelism: 0, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 10 } },
    });
    const childrenOf = async (uid: string | undefined): Promise<ImagePullJob[]> =>
      (await client().list<ImagePullJob>(IMAGE_PULL_JOBS, { namespace: NS })).items.filter(
        (j) => !j.metadata.deletionTimestamp && j.metadata.ownerReferences?.some((o) => o.uid === uid),
      );
    const list = await waitFor(() => getListJob(client(), NS, 'list-edit'));
    const paused = await waitFor(async () => {
      const c = await childrenOf(list.metadata.uid);
      return c.length === 2 ? c : undefined;
    });
    await client().patch(
      IMAGE_LIST_PULL_JOBS,
      'list-edit',
      { spec: { parallelism: 3 } },
      { type: 'merge', namespace: NS },
    );
    const done = await waitFor(
      async () => {
        const l = await getListJob(client(), NS, 'list-edit');
        return l?.status?.completionTime ? l : undefined;
      },
      { timeoutMs: 60_000, message: 'the edited ImageListPullJob to complete' },
    ).catch(async (err: unknown) => {
      // show the list job, its children and the controller
      const l = await getListJob(client(), NS, 'list-edit');
      const children = (await childrenOf(list.metadata.uid)).map((c) =>
        JSON.stringify({ name: c.metadata.name, labels: c.metadata.labels, spec: c.spec, status: c.status }),
      );
      const lines = controller()
        .logs.slice(-40)
        .map((line) => JSON.stringify(line));
      throw new Error(
        `${errorMessage(err)}\nlist job: ${JSON.stringify({ labels: l?.metadata.labels, status: l?.status })}\n` +
          `children:\n${children.join('\n')}\nthe controller's last lines:\n${lines.join('\n')}`,
      );
    });
    assert.equal(done.status?.succeeded, 2);
    const hash = done.metadata.labels?.['controller-revision-hash'];
    const replaced = await childrenOf(list.metadata.uid);
    assert.equal(replaced.length, 2);
    for (const child of replaced) {
      assert.equal(child.metadata.labels?.['controller-revision-hash'], hash);
      assert.ok(!paused.some((p) => p.metadata.name === child.metadata.name), 'a new child');
      assert.equal(child.spec.parallelism, 3);
    }
    await waitFor(async () => !(await getListJob(client(), NS, 'list-edit')), {
      timeoutMs: 20_000,
      message: 'the list job to go after its TTL',
    });
  });

  it('serves /healthz and kruise_controller_* metrics', async () => {
    assert.equal((await fetch(`${controller().statusUrl}/healthz`)).status, 200);
    const text = await controller().metrics();
    for (const name of [
      'kruise_controller_reconciles_total{controller="imagepulljob",result="ok"}',
      'kruise_controller_nodeimage_writes_total{controller="imagepulljob",reason="tag"}',
      'kruise_controller_webhook_requests_total{path="/validate-apps-kruise-io-imagepulljob",allowed="true"}',
      'kruise_controller_webhook_certificate_expiry_seconds{certificate="serving"}',
      'kruise_controller_leader 1',
    ]) {
      assert.ok(text.includes(name), `${name} in /metrics`);
    }
  });

  it("serves the process metrics under prom-client's default names, as the agent does (docs/metrics.md)", async () => {
    const text = await controller().metrics();
    assert.match(text, /^process_resident_memory_bytes \d+/m);
    assert.match(text, /^nodejs_heap_size_used_bytes \d+/m);
    assert.doesNotMatch(text, /^kruise_controller_(process|nodejs)_/m);
  });
});
