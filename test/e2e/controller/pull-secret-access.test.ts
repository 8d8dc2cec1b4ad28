// kruise-controller (a real process, its ServiceAccount's token) reads pull secrets with least privilege on the real
// cluster, where kube-apiserver's RBAC answers: in "locked" nothing is granted; in "open" a Role names regcred
// (get, list, watch with resourceNames: only requests that name it are allowed, by path or by fieldSelector
// metadata.name); in "later" nothing until the test runs the rolebinding command the job's status gives. A 403 shows
// in the job's status and a Warning event naming the namespace and that command while the job still completes (the
// real agents pull the image without the secret); an edit of a source reaches its copy within seconds through the
// watch of that one secret, with no event on the job; a grant made while a job runs is picked up within the watch's
// backoff; the copy and the watch go with the last job referencing the source.
import assert from 'node:assert/strict';
import { CoreResources } from '../../../src/kube/resource.js';
import { copyNameFor } from '../../../src/controller/pullsecrets/secret-sync.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import type { SecretObject } from '../../../src/controller/resources.js';
import { kubectl } from '../../cluster/k8s/system.js';
import { startSystem, useRealCluster, type RealCluster, type RealSystem } from '../../support/real-cluster.js';
import {
  eventsSince,
  freshNamespace,
  grantNamedSecrets,
  removeNamespace,
  splitReference,
} from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';
import { getNodeImage, waitForJob } from './controller-env.js';

const LOCKED = 'e2e-psa-locked';
const OPEN = 'e2e-psa-open';
const LATER = 'e2e-psa-later';
const CONFIG_NS = 'kruise-daemon-config';
const grant = (ns: string): string =>
  'kubectl create rolebinding kruise-controller-pull-secret-reader --clusterrole=kruise-controller-pull-secret-reader ' +
  `--serviceaccount=kruise-system:kruise-controller -n ${ns}`;

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A pull secret for a registry no image here comes from: the agents pull without it. */
function pullSecret(namespace: string, token: string, name = 'regcred'): SecretObject {
  return {
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(`{"auths":{"r.invalid":{"auth":"${b64(token)}"}}}`) },
  };
}

describe('kruise-controller e2e: pull secrets with least privilege, real RBAC', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let system: RealSystem;
  let image: string;
  let since: number;
  const client = () => cluster.admin;
  const controller = () => system.controller!;

  function job(namespace: string, name: string, type: 'Always' | 'Never'): ImagePullJob {
    return {
      metadata: { name, namespace },
      spec: { image, pullSecrets: ['regcred'], parallelism: 2, completionPolicy: { type } },
    };
  }

  const copyToken = async (namespace: string): Promise<string | undefined> => {
    const list = await client().list<SecretObject>(CoreResources.secrets, { namespace: CONFIG_NS });
    return list.items.find((s) => s.metadata?.name === copyNameFor(namespace, 'regcred'))?.data?.['.dockerconfigjson'];
  };

  before(async () => {
    cluster = await useRealCluster();
    image = cluster.images.busybox1;
    since = Date.now();
    for (const ns of [LOCKED, OPEN, LATER]) {
      await freshNamespace(client(), ns);
      await client().create(CoreResources.secrets, pullSecret(ns, 'one'), { namespace: ns });
    }
    await client().create(CoreResources.secrets, pullSecret(OPEN, 'not-for-the-controller', 'other'), {
      namespace: OPEN,
    });
    await grantNamedSecrets(client(), OPEN, ['regcred']);
    system = await startSystem(cluster, { controllerArgs: ['--nodeimage-creation-delay', '1s'] });
    for (const node of cluster.nodes) await waitFor(() => getNodeImage(client(), node.name));
  });

  after(async () => {
    if (cluster) for (const ns of [LOCKED, OPEN, LATER]) await removeNamespace(client(), ns);
    await system?.stop();
  });

  it('on 403 says so in the job status and a Warning event, and the job completes without the secret', async () => {
    await client().create(IMAGE_PULL_JOBS, job(LOCKED, 'forbidden', 'Always'));
    const done = await waitForJob(client(), LOCKED, 'forbidden', (j) => !!j.status?.completionTime);
    assert.equal(done.status?.succeeded, 2, 'the agents pulled without the secret');
    const message = done.status?.message ?? '';
    assert.ok(message.startsWith('job has completed; kruise-controller may not read pull secrets regcred'), message);
    assert.ok(message.includes(`in namespace ${LOCKED} (403 Forbidden)`) && message.endsWith(grant(LOCKED)), message);
    const event = await waitFor(async () =>
      (await eventsSince(client(), LOCKED, since)).find((e) => e.reason === 'PullSecretForbidden'),
    );
    assert.equal(event.type, 'Warning');
    assert.ok(event.message?.endsWith(grant(LOCKED)), event.message);
    const ni = await getNodeImage(client(), cluster.nodes[0]!.name);
    assert.equal(
      ni?.spec?.images?.[splitReference(image).image]?.pullSecrets,
      undefined,
      'no reference to a secret not copied',
    );
    assert.equal(await copyToken(LOCKED), undefined);
  });

  it('follows every edit of a source within seconds (a watch of that one secret), with no event on the job', async () => {
    await client().create(IMAGE_PULL_JOBS, job(OPEN, 'never', 'Never'));
    await waitFor(async () => (await copyToken(OPEN)) === pullSecret(OPEN, 'one').data?.['.dockerconfigjson']);
    await waitForJob(client(), OPEN, 'never', (j) => j.status?.succeeded === 2);
    const jobBefore = await client().get<ImagePullJob>(IMAGE_PULL_JOBS, 'never', { namespace: OPEN });
    for (const token of ['two', 'three']) {
      const source = await client().get<SecretObject>(CoreResources.secrets, 'regcred', { namespace: OPEN });
      await client().update(CoreResources.secrets, { ...source, data: pullSecret(OPEN, token).data });
      // Seconds, not the 5 minutes of the resync this replaced (the figure is `npm run bench -- pull-secrets`).
      await waitFor(async () => (await copyToken(OPEN)) === pullSecret(OPEN, token).data?.['.dockerconfigjson'], {
        timeoutMs: 5_000,
        message: `the copy to carry ${token}`,
      });
    }
    const jobAfter = await client().get<ImagePullJob>(IMAGE_PULL_JOBS, 'never', { namespace: OPEN });
    assert.deepEqual(jobAfter.spec, jobBefore.spec, 'the job was not touched');
  });

  it('picks up a grant made while a job runs within the watch backoff, with no event on the job', async () => {
    await client().create(IMAGE_PULL_JOBS, job(LATER, 'waiting', 'Never'));
    await waitForJob(
      client(),
      LATER,
      'waiting',
      (j) => j.status?.succeeded === 2 && /may not read pull secrets regcred/.test(j.status.message ?? ''),
    );
    // Settled: no reconcile for half a second, so no event of the job or its NodeImages is on its way; from here on
    // only the watch of later/regcred (retrying its 403s) can bring the job back.
    await controller().settled('imagepulljob');
    // an admin runs the rolebinding command the status gives
    const command = grant(LATER).split(' ');
    const granted = kubectl(cluster.layout, command.slice(1));
    assert.ok(granted.ok, granted.out);
    await waitFor(async () => (await copyToken(LATER)) === pullSecret(LATER, 'one').data?.['.dockerconfigjson'], {
      timeoutMs: 45_000,
      message: 'the copy once granted (watch retries back off 1 s → 30 s)',
    });
    const settled = await waitForJob(client(), LATER, 'waiting', (j) => !/may not read/.test(j.status?.message ?? ''));
    assert.ok(!/403/.test(settled.status?.message ?? ''), settled.status?.message);
  });

  it('reads secrets outside kruise-daemon-config only by name: a GET, or a list and watch of that one secret', async () => {
    // In OPEN, RBAC allows only requests naming regcred: any other (a list or watch of the namespace) would have been
    // refused and reported as forbidden. The controller has no cluster-wide secret rights at all (deploy/).
    const job = await client().get<ImagePullJob>(IMAGE_PULL_JOBS, 'never', { namespace: OPEN });
    assert.doesNotMatch(job.status?.message ?? '', /may not read|403/);
    const forbidden = (await eventsSince(client(), OPEN, since)).filter((e) => e.reason === 'PullSecretForbidden');
    assert.deepEqual(forbidden, []);
    const can = (...args: string[]): string =>
      kubectl(cluster.layout, [
        'auth',
        'can-i',
        '--as',
        'system:serviceaccount:kruise-system:kruise-controller',
        ...args,
      ])
        .out.split('\n')
        .find((line) => line === 'yes' || line === 'no') ?? 'no answer';
    assert.equal(can('list', 'secrets', '-n', OPEN), 'no', 'the Role grants no unnamed list');
    assert.equal(can('get', 'secrets/other', '-n', OPEN), 'no');
    assert.equal(can('get', 'secrets/regcred', '-n', OPEN), 'yes');
    assert.equal(can('list', 'secrets', '--all-namespaces'), 'no');
  });

  it('lets the copy and the watch go with the last job referencing the source', async () => {
    const watches = async (): Promise<number> =>
      Number(/^kruise_controller_pull_secret_source_watches (\d+)$/m.exec(await controller().metrics())?.[1]);
    assert.equal(await watches(), 2, 'open/regcred and later/regcred');
    await client().delete(IMAGE_PULL_JOBS, 'never', { namespace: OPEN });
    await waitFor(async () => (await copyToken(OPEN)) === undefined, { message: 'the copy of open/regcred to go' });
    await waitFor(async () => (await watches()) === 1, { message: 'the watch of open/regcred to stop' });
    await client().delete(IMAGE_PULL_JOBS, 'waiting', { namespace: LATER });
    await waitFor(async () => (await watches()) === 0, { message: 'the last watch to stop' });
  });
});
