// kruise-controller (a real process) reads pull secrets with least privilege, against the API emulator answering 403
// where RBAC would: in "locked" every secret request (no grant); in "open" every secret request that does not name
// regcred, by its path or by fieldSelector metadata.name (a Role with resourceNames [regcred]: get, list, watch); in
// "later" everything until the test grants it. A 403 shows in the job's status and a Warning event naming the
// namespace and the rolebinding command while the job still completes; an edit of a source reaches its copy within
// seconds through the watch of that one secret, with no event on the job; a grant made while a job runs is picked up
// within the watch's backoff; the copy and the watch go with the last job referencing the source.
import assert from 'node:assert/strict';
import { CoreResources } from '../../../src/kube/resource.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { copyNameFor } from '../../../src/controller/pullsecrets/secret-sync.js';
import { IMAGE_PULL_JOBS, type ImagePullJobObject, type SecretObject } from '../../../src/controller/resources.js';
import type { FaultRequest } from '../../cluster/apiserver/faults.js';
import { FakeAgent } from '../../support/fake-agent.js';
import { waitFor } from '../../support/wait.js';
import {
  createNamespace,
  createReadyNode,
  getNodeImage,
  startControllerEnv,
  waitForJob,
  type ControllerEnv,
} from './controller-env.js';

const NODES = ['kd-psa-node-a', 'kd-psa-node-b'];
const CONFIG_NS = 'kruise-daemon-config';
const grant = (ns: string): string =>
  'kubectl create rolebinding kruise-controller-pull-secret-reader --clusterrole=kruise-controller-pull-secret-reader ' +
  `--serviceaccount=kruise-system:kruise-controller -n ${ns}`;

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function pullSecret(namespace: string, token: string, name = 'regcred'): SecretObject {
  return {
    metadata: { name, namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(`{"auths":{"r.invalid":{"auth":"${b64(token)}"}}}`) },
  };
}

function job(namespace: string, name: string, type: 'Always' | 'Never'): ImagePullJobObject {
  return {
    metadata: { name, namespace },
    spec: { image: 'r.invalid/app:1', pullSecrets: ['regcred'], parallelism: 2, completionPolicy: { type } },
  } as ImagePullJobObject;
}

/** The secret a request is for, as kube-apiserver's RequestInfo sees it: the path's name or the field selector's. */
function requestedSecret(req: FaultRequest): { namespace: string; name?: string } | undefined {
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/.exec(req.path);
  if (!m) return undefined;
  const selected = /^metadata\.name==?([^,]+)$/.exec(req.query.get('fieldSelector') ?? '')?.[1];
  return { namespace: m[1]!, name: m[2] ?? selected };
}

describe('kruise-controller e2e: pull secrets with least privilege', function () {
  this.timeout(120_000);
  let env: ControllerEnv;
  let agent: FakeAgent;
  let laterGranted = false;
  /** Secret requests outside kruise-daemon-config that named no secret. */
  const unnamed: string[] = [];

  const copyToken = async (namespace: string): Promise<string | undefined> => {
    const list = await env.client.list<SecretObject>(CoreResources.secrets, { namespace: CONFIG_NS });
    return list.items.find((s) => s.metadata?.name === copyNameFor(namespace, 'regcred'))?.data?.['.dockerconfigjson'];
  };

  before(async () => {
    env = await startControllerEnv();
    for (const node of NODES) await createReadyNode(env.client, node);
    for (const ns of ['locked', 'open', 'later']) {
      await createNamespace(env.client, ns);
      await env.client.create(CoreResources.secrets, pullSecret(ns, 'one'));
    }
    await env.client.create(CoreResources.secrets, pullSecret('open', 'not-for-the-controller', 'other'));
    // What RBAC would answer (the test itself reads "open"/regcred only by name and never reads "locked" or "later").
    env.api.faults.failNext(1_000_000, 403, {
      match: (req) => {
        const secret = requestedSecret(req);
        if (!secret || secret.namespace === CONFIG_NS) return false;
        if (req.method === 'GET' && secret.name === undefined) unnamed.push(`${req.path}?${req.query.toString()}`);
        if (secret.namespace === 'locked') return true;
        if (secret.namespace === 'later') return !laterGranted;
        if (secret.namespace === 'open') return req.method === 'GET' && secret.name !== 'regcred';
        return false;
      },
    });
    agent = new FakeAgent({ client: env.client, serves: (n) => NODES.includes(n), delayMs: 50 });
    await agent.start();
    await env.startController();
    for (const node of NODES) await waitFor(() => getNodeImage(env.client, node));
  });

  after(async () => {
    await agent?.stop();
    await env?.close();
  });

  it('on 403 says so in the job status and a Warning event, and the job completes without the secret', async () => {
    await env.client.create(IMAGE_PULL_JOBS, job('locked', 'forbidden', 'Always'));
    const done = await waitForJob(env.client, 'locked', 'forbidden', (j) => !!j.status?.completionTime);
    assert.equal(done.status?.succeeded, 2);
    const message = done.status?.message ?? '';
    assert.ok(message.startsWith('job has completed; kruise-controller may not read pull secrets regcred'), message);
    assert.ok(message.includes('in namespace locked (403 Forbidden)') && message.endsWith(grant('locked')), message);
    const event = await waitFor(async () => {
      const events = await env.client.list<KubeObject & { reason?: string; type?: string; message?: string }>(
        CoreResources.events,
        { namespace: 'locked' },
      );
      return events.items.find((e) => e.reason === 'PullSecretForbidden');
    });
    assert.equal(event.type, 'Warning');
    assert.ok(event.message?.endsWith(grant('locked')), event.message);
    const ni = await getNodeImage(env.client, NODES[0]!);
    assert.equal(ni?.spec?.images?.['r.invalid/app']?.pullSecrets, undefined, 'no reference to a secret not copied');
    assert.equal(await copyToken('locked'), undefined);
  });

  it('follows every edit of a source within seconds (a watch of that one secret), with no event on the job', async () => {
    await env.client.create(IMAGE_PULL_JOBS, job('open', 'never', 'Never'));
    await waitFor(async () => (await copyToken('open')) === pullSecret('open', 'one').data?.['.dockerconfigjson']);
    await waitForJob(env.client, 'open', 'never', (j) => j.status?.succeeded === 2);
    const jobBefore = await env.client.get<ImagePullJobObject>(IMAGE_PULL_JOBS, 'never', { namespace: 'open' });
    for (const token of ['two', 'three']) {
      const source = await env.client.get<SecretObject>(CoreResources.secrets, 'regcred', { namespace: 'open' });
      await env.client.update(CoreResources.secrets, { ...source, data: pullSecret('open', token).data });
      // Seconds, not the 5 minutes of the resync this replaced (the figure is `npm run bench -- pull-secrets`).
      await waitFor(async () => (await copyToken('open')) === pullSecret('open', token).data?.['.dockerconfigjson'], {
        timeoutMs: 5_000,
        message: `the copy to carry ${token}`,
      });
    }
    const jobAfter = await env.client.get<ImagePullJobObject>(IMAGE_PULL_JOBS, 'never', { namespace: 'open' });
    assert.deepEqual(jobAfter.spec, jobBefore.spec, 'the job was not touched');
  });

  it('picks up a grant made while a job runs within the watch backoff, with no event on the job', async () => {
    await env.client.create(IMAGE_PULL_JOBS, job('later', 'waiting', 'Never'));
    await waitForJob(
      env.client,
      'later',
      'waiting',
      (j) => j.status?.succeeded === 2 && /may not read pull secrets regcred/.test(j.status.message ?? ''),
    );
    // Settled: no reconcile for half a second, so no event of the job or its NodeImages is on its way; from here on
    // only the watch of later/regcred (retrying its 403s) can bring the job back.
    await env.controller!.settled('imagepulljob');
    laterGranted = true; // an admin runs the rolebinding command
    await waitFor(async () => (await copyToken('later')) === pullSecret('later', 'one').data?.['.dockerconfigjson'], {
      timeoutMs: 45_000,
      message: 'the copy once granted (watch retries back off 1 s → 30 s)',
    });
    const settled = await waitForJob(
      env.client,
      'later',
      'waiting',
      (j) => !/may not read/.test(j.status?.message ?? ''),
    );
    assert.ok(!/403/.test(settled.status?.message ?? ''), settled.status?.message);
  });

  it('reads secrets outside kruise-daemon-config only by name: a GET, or a list and watch of that one secret', () => {
    assert.deepEqual(unnamed, [], 'no unnamed secret list or watch');
    const requests = (prefix: string): number =>
      env.api.requestCount({ userAgent: 'kruise-controller', pathPrefix: prefix });
    assert.equal(requests('/api/v1/secrets'), 0, 'no cluster-wide secret list or watch');
    // The list and watch requests go to the collection path, named by their field selector.
    assert.ok(requests('/api/v1/namespaces/open/secrets') > requests('/api/v1/namespaces/open/secrets/regcred'));
  });

  it('lets the copy and the watch go with the last job referencing the source', async () => {
    const watches = async (): Promise<number> =>
      Number(/^kruise_controller_pull_secret_source_watches (\d+)$/m.exec(await env.controller!.metrics())?.[1]);
    assert.equal(await watches(), 2, 'open/regcred and later/regcred');
    await env.client.delete(IMAGE_PULL_JOBS, 'never', { namespace: 'open' });
    await waitFor(async () => (await copyToken('open')) === undefined, { message: 'the copy of open/regcred to go' });
    await waitFor(async () => (await watches()) === 1, { message: 'the watch of open/regcred to stop' });
    await env.client.delete(IMAGE_PULL_JOBS, 'waiting', { namespace: 'later' });
    await waitFor(async () => (await watches()) === 0, { message: 'the last watch to stop' });
  });
});
