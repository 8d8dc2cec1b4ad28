// Holes 2 and 4 of issue 26 as attacks on the real cluster (kube-apiserver 1.33, deploy/'s RBAC, our agents and
// controller as deployed), with two tenant namespaces acting against each other on node 2:
// - hole 2: node 1's agent token reads neither by GET on the API nor through the controller's pull-credentials
//   endpoint the copy of a secret only a job for node 2 needs; a token that is unbound or bound to a Node gets
//   nothing either way; node 2's own token gets exactly its tag's secret from the endpoint.
// - hole 4: a job of namespace U without a secret does not pull a private image with namespace S's credentials (they
//   are on the same image of the same NodeImage); a malformed secret of S does not fail U's job, and nothing U sees
//   names S's secret.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import {
  CONTROLLER_CA_CONFIGMAP,
  CONTROLLER_CA_KEY,
  PULL_CREDENTIALS_PATH,
} from '../../../src/api/pull-credentials.js';
import { copyNameFor } from '../../../src/controller/pullsecrets/secret-sync.js';
import { CriClient } from '../../../src/cri/client.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isForbidden } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { kubectl, SYSTEM_NAMESPACE } from '../../cluster/k8s/system.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { getNodeImage, waitForJob } from '../controller/controller-env.js';
import { removeImages, tagStatusOf } from '../../support/nodeimages.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import {
  eventsSince,
  freshNamespace,
  grantNamedSecrets,
  removeNamespace,
  splitReference,
} from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';

const S = 'e2e-cred-s';
const U = 'e2e-cred-u';
const CONFIG_NS = 'kruise-daemon-config';

async function forbidden(call: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(call, (err: unknown) => isForbidden(err) || assert.fail(`${what}: ${String(err)}`));
}

/** GET of the pull-credentials endpoint with `token`, trusting the CA the controller published. */
function askEndpoint(
  url: string,
  ca: string,
  token: string,
  image: string,
  tag: string,
): Promise<{ status: number; body: string }> {
  const target = new URL(PULL_CREDENTIALS_PATH, url);
  target.searchParams.set('image', image);
  target.searchParams.set('tag', tag);
  return new Promise((resolve, reject) => {
    const req = request(target, { ca, headers: { authorization: `Bearer ${token}` }, timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('pull credentials of one tenant stay with its own jobs and nodes (issue 26, holes 2 and 4)', function () {
  this.timeout(300_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let node1: NodeLayout;
  let node2: NodeLayout;
  let cri2: CriClient;
  let authImage: string;
  let digest: string;
  let since: number;
  const admin = () => cluster.admin;

  function secret(namespace: string, name: string, entry: Record<string, string>): KubeObject {
    const config = { auths: { [cluster.authRegistry]: entry } };
    return {
      metadata: { name, namespace },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
    } as KubeObject;
  }

  function job(
    namespace: string,
    name: string,
    image: string,
    pullSecrets: string[],
    completion: 'Always' | 'Never' = 'Always',
  ): ImagePullJob {
    return {
      metadata: { name, namespace },
      spec: {
        image,
        ...(pullSecrets.length > 0 && { pullSecrets }),
        selector: { names: [node2.name] },
        // Always: every job's pull reaches the registry with its own credentials, whether or not the image is on the
        // node (the agent pulls again, within seconds, the image of a Succeeded tag that a test removed)
        imagePullPolicy: 'Always',
        pullPolicy: { backoffLimit: 0, timeoutSeconds: 60 },
        completionPolicy: { type: completion },
      },
    };
  }

  async function tokenOf(kubeconfig: string): Promise<string> {
    const connection = await loadKubeconfig(kubeconfig);
    assert.equal(connection.auth.kind, 'token');
    return connection.auth.kind === 'token' ? await connection.auth.source.token() : '';
  }

  function createToken(extra: string[]): string {
    const made = kubectl(cluster.layout, [
      'create',
      'token',
      'kruise-daemon',
      '-n',
      SYSTEM_NAMESPACE,
      '--duration=1h',
      ...extra,
    ]);
    assert.ok(made.ok, made.out);
    return made.out.trim();
  }

  async function ca(): Promise<string> {
    const cm = await waitFor(() =>
      admin()
        .get<KubeObject & { data?: Record<string, string> }>(CoreResources.configMaps, CONTROLLER_CA_CONFIGMAP, {
          namespace: CONFIG_NS,
        })
        .catch(() => undefined),
    );
    return cm.data?.[CONTROLLER_CA_KEY] ?? '';
  }

  before(async () => {
    cluster = await useRealCluster();
    [node1, node2] = cluster.nodes as [NodeLayout, NodeLayout];
    cri2 = new CriClient({ socket: node2.hostPaths.runtimeSocket });
    authImage = cluster.images.authBusybox1;
    since = Date.now();
    for (const ns of [S, U]) await freshNamespace(admin(), ns);
    const good = { username: cluster.authUser, password: cluster.authPassword };
    await admin().create(CoreResources.secrets, secret(S, 'regcred', good), { namespace: S });
    await admin().create(CoreResources.secrets, secret(S, 'badcred', { auth: '!!!notbase64' }), { namespace: S });
    await admin().create(CoreResources.secrets, secret(U, 'ucred', good), { namespace: U });
    await grantNamedSecrets(admin(), S, ['regcred', 'badcred']);
    await grantNamedSecrets(admin(), U, ['ucred']);
    await removeImages(cri2, [authImage]);
    system = await startSystem(cluster, { controllerArgs: ['--nodeimage-creation-delay', '1s'] });
    for (const node of cluster.nodes) await waitFor(() => getNodeImage(admin(), node.name));
  });

  after(async () => {
    if (cluster) for (const ns of [S, U]) await removeNamespace(admin(), ns);
    await system?.stop();
    if (cri2) {
      await removeImages(cri2, [authImage]).catch(() => undefined);
      cri2.close();
    }
  });

  it("hole 2: node 1's token cannot read the copy only node 2's job needs, by GET or through the controller", async () => {
    // Never: the job stays active, so its copy stays (an Always job's copy goes when the job completes)
    await admin().create(IMAGE_PULL_JOBS, job(S, 'private', authImage, ['regcred'], 'Never'));
    const done = await waitForJob(
      admin(),
      S,
      'private',
      (j) => (j.status?.succeeded ?? 0) + (j.status?.failed ?? 0) > 0,
      120_000,
    );
    assert.equal(
      done.status?.succeeded,
      1,
      `node 2 pulled the private image with S's secret: ${JSON.stringify(done.status)}`,
    );
    const copy = copyNameFor(S, 'regcred');
    const copies = await admin().list(CoreResources.secrets, { namespace: CONFIG_NS });
    assert.ok(
      copies.items.some((c) => c.metadata?.name === copy),
      `the copy is there: ${copies.items.map((c) => c.metadata?.name).join(', ')}; job ${JSON.stringify(done.status)}`,
    );
    const { image, tag } = splitReference(authImage);

    const node1Kubeconfig = cluster.agentKubeconfigs[node1.name]!;
    const node1Api = new KubeClient(await loadKubeconfig(node1Kubeconfig), { timeoutMs: 20_000 });
    const node2Api = new KubeClient(await loadKubeconfig(cluster.agentKubeconfigs[node2.name]!), { timeoutMs: 20_000 });
    const unboundToken = createToken([]);
    const nodeBoundToken = createToken(['--bound-object-kind', 'Node', '--bound-object-name', node1.name]);
    try {
      // by the API: no agent token reads any secret any more (before: get, list, watch in kruise-daemon-config)
      await forbidden(node1Api.get(CoreResources.secrets, copy, { namespace: CONFIG_NS }), "node 1's GET of the copy");
      await forbidden(node1Api.list(CoreResources.secrets, { namespace: CONFIG_NS }), "node 1's list");
      await forbidden(node2Api.get(CoreResources.secrets, copy, { namespace: CONFIG_NS }), "node 2's GET of the copy");
      for (const [what, token] of [
        ['unbound', unboundToken],
        ['Node-bound', nodeBoundToken],
      ] as const) {
        const other = new KubeClient(
          {
            ...(await loadKubeconfig(node1Kubeconfig)),
            auth: { kind: 'token', source: { token: () => Promise.resolve(token), invalidate: () => undefined } },
          },
          { timeoutMs: 20_000 },
        );
        await forbidden(other.get(CoreResources.secrets, copy, { namespace: CONFIG_NS }), `${what} token's GET`);
        other.close();
      }

      // through the controller: only node 2's pod-bound token gets the tag's secret
      const url = system.controller!.pullCredentialsUrl;
      const pem = await ca();
      const asNode1 = await askEndpoint(url, pem, await tokenOf(node1Kubeconfig), image, tag);
      assert.equal(asNode1.status, 403, asNode1.body);
      assert.match(asNode1.body, new RegExp(`image ${image} is not in the spec of NodeImage ${node1.name}`));
      assert.ok(!asNode1.body.includes('dockerconfigjson'), 'nothing of the secret');
      for (const [what, token] of [
        ['unbound', unboundToken],
        ['Node-bound', nodeBoundToken],
      ] as const) {
        const answer = await askEndpoint(url, pem, token, image, tag);
        assert.equal(answer.status, 403, `${what}: ${answer.body}`);
        assert.match(answer.body, /not bound to a pod/);
      }
      const forged = await askEndpoint(url, pem, 'not-a-token', image, tag);
      assert.equal(forged.status, 401, forged.body);
      const asNode2 = await askEndpoint(url, pem, await tokenOf(cluster.agentKubeconfigs[node2.name]!), image, tag);
      assert.equal(asNode2.status, 200, asNode2.body);
      const answer = JSON.parse(asNode2.body) as { secrets: Array<{ name: string }> };
      assert.deepEqual(
        answer.secrets.map((s) => s.name),
        [copy],
      );
      const unknownTag = await askEndpoint(
        url,
        pem,
        await tokenOf(cluster.agentKubeconfigs[node2.name]!),
        image,
        'nope',
      );
      assert.equal(unknownTag.status, 403);
      assert.match(unknownTag.body, new RegExp(`tag ${image}:nope is not in the spec of NodeImage ${node2.name}`));
    } finally {
      node1Api.close();
      node2Api.close();
    }
  });

  it("hole 4: U's job without a secret does not pull S's private image with S's credentials", async () => {
    const P = cluster.authPassword;
    const found = await cri2.imageStatus({ image: { image: authImage } });
    digest = found.image?.repo_digests?.[0]?.split('@')[1] ?? '';
    assert.match(digest, /^sha256:/, 'the private image is on node 2 (S pulled it)');
    await removeImages(cri2, [authImage]);
    const { image } = splitReference(authImage);
    // the same image, another tag (its digest): one entry of node 2's NodeImage, whose pullSecrets hold S's copy
    await admin().create(IMAGE_PULL_JOBS, job(U, 'nosecret', `${image}@${digest}`, []));
    const done = await waitForJob(admin(), U, 'nosecret', (j) => !!j.status?.completionTime, 120_000);
    assert.equal(done.status?.failed, 1, `U's job failed: ${JSON.stringify(done.status)}`);
    const ni = await getNodeImage(admin(), node2.name);
    assert.ok(
      ni?.spec?.images?.[image]?.pullSecrets?.some((r) => r.name === copyNameFor(S, 'regcred')),
      "S's copy is among the image's pull secrets on node 2 (what U's tag used before)",
    );
    const message = tagStatusOf(ni!.status!, image, digest)?.message ?? '';
    assert.match(message, /no pull secret gave credentials for registry/);
    assert.ok(!message.includes(copyNameFor(S, 'regcred')) && !message.includes(S), message);
    assert.ok(!JSON.stringify(system.agentProcess(node2).logs).includes(P), 'no password in the logs');
  });

  it("hole 4: S's malformed secret fails S's own job only; U's job pulls with U's secret and never sees S's name", async () => {
    const { image, tag } = splitReference(authImage);
    const bad = copyNameFor(S, 'badcred');
    await admin().create(IMAGE_PULL_JOBS, job(S, 'malformed', authImage, ['badcred']));
    await waitFor(
      async () =>
        (await getNodeImage(admin(), node2.name))?.spec?.images?.[image]?.pullSecrets?.some((r) => r.name === bad),
      {
        timeoutMs: 60_000,
        message: "S's malformed copy among the image's pull secrets on node 2",
      },
    );
    await admin().create(IMAGE_PULL_JOBS, job(U, 'withsecret', `${image}@${digest}`, ['ucred']));
    const uDone = await waitForJob(admin(), U, 'withsecret', (j) => !!j.status?.completionTime, 120_000);
    const uTag = async () =>
      JSON.stringify(tagStatusOf((await getNodeImage(admin(), node2.name))!.status!, image, digest));
    assert.equal(uDone.status?.succeeded, 1, `U's job succeeded: ${JSON.stringify(uDone.status)} ${await uTag()}`);
    const sDone = await waitForJob(admin(), S, 'malformed', (j) => !!j.status?.completionTime, 120_000);
    assert.equal(sDone.status?.failed, 1, `S's job with the malformed secret failed: ${JSON.stringify(sDone.status)}`);
    const ni = await getNodeImage(admin(), node2.name);
    assert.match(
      tagStatusOf(ni!.status!, image, tag)?.message ?? '',
      new RegExp(`${bad}.*not base64 of user:password`),
    );
    const uStatus = tagStatusOf(ni!.status!, image, digest);
    assert.equal(uStatus?.phase, 'Succeeded');
    const seenByU = JSON.stringify([uStatus, uDone.status, await eventsSince(admin(), U, since)]);
    assert.ok(!seenByU.includes(bad) && !seenByU.includes(copyNameFor(S, 'regcred')) && !seenByU.includes(S), seenByU);
  });
});
