// kruise-controller (a real process) reads pull secrets with least privilege, against the API emulator: it never
// lists or watches secrets outside kruise-daemon-config (only named GETs of the sources), a 403 on a source (the
// emulator answers 403 where RBAC would) shows in the job's status and a Warning event naming the namespace and the
// rolebinding command while the job still completes, and the periodic resync carries a source change into the copy
// of a running Never job without any event on the job.
import assert from 'node:assert/strict';
import { CoreResources } from '../../../src/kube/resource.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { copyNameFor } from '../../../src/controller/pullsecrets/secret-sync.js';
import { IMAGE_PULL_JOBS, type ImagePullJobObject, type SecretObject } from '../../../src/controller/resources.js';
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
const UA = 'kruise-controller';
const CONFIG_NS = 'kruise-daemon-config';
const GRANT =
  'kubectl create rolebinding kruise-controller-pull-secret-reader --clusterrole=kruise-controller-pull-secret-reader ' +
  '--serviceaccount=kruise-system:kruise-controller -n locked';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function pullSecret(namespace: string, token: string): SecretObject {
  return {
    metadata: { name: 'regcred', namespace },
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

describe('kruise-controller e2e: pull secrets with least privilege', function () {
  this.timeout(120_000);
  let env: ControllerEnv;
  let agent: FakeAgent;

  before(async () => {
    env = await startControllerEnv();
    for (const node of NODES) await createReadyNode(env.client, node);
    for (const ns of ['locked', 'open']) {
      await createNamespace(env.client, ns);
      await env.client.create(CoreResources.secrets, pullSecret(ns, 'one'));
    }
    // What RBAC answers without the reader binding in "locked".
    env.api.faults.failNext(1_000_000, 403, {
      match: (r) => r.method === 'GET' && r.path.startsWith('/api/v1/namespaces/locked/secrets'),
    });
    agent = new FakeAgent({ client: env.client, serves: (n) => NODES.includes(n), delayMs: 50 });
    await agent.start();
    await env.startController(['--pull-secret-resync-period', '1s']);
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
    assert.ok(message.includes('in namespace locked (403 Forbidden)') && message.endsWith(GRANT), message);
    const event = await waitFor(async () => {
      const events = await env.client.list<KubeObject & { reason?: string; type?: string; message?: string }>(
        CoreResources.events,
        { namespace: 'locked' },
      );
      return events.items.find((e) => e.reason === 'PullSecretForbidden');
    });
    assert.equal(event.type, 'Warning');
    assert.ok(event.message?.endsWith(GRANT), event.message);
    const ni = await getNodeImage(env.client, NODES[0]!);
    assert.equal(ni?.spec?.images?.['r.invalid/app']?.pullSecrets, undefined, 'no reference to a secret not copied');
    const copies = await env.client.list<SecretObject>(CoreResources.secrets, { namespace: CONFIG_NS });
    assert.ok(!copies.items.some((s) => s.metadata?.name === copyNameFor('locked', 'regcred')));
  });

  it('follows a source change by the periodic resync, with no event on the job', async () => {
    await env.client.create(IMAGE_PULL_JOBS, job('open', 'never', 'Never'));
    const copyName = copyNameFor('open', 'regcred');
    const token = async (): Promise<string | undefined> => {
      const list = await env.client.list<SecretObject>(CoreResources.secrets, { namespace: CONFIG_NS });
      return list.items.find((s) => s.metadata?.name === copyName)?.data?.['.dockerconfigjson'];
    };
    await waitFor(async () => (await token()) === pullSecret('open', 'one').data?.['.dockerconfigjson'] || undefined);
    await waitForJob(env.client, 'open', 'never', (j) => j.status?.succeeded === 2);
    const source = await env.client.get<SecretObject>(CoreResources.secrets, 'regcred', { namespace: 'open' });
    await env.client.update(CoreResources.secrets, { ...source, data: pullSecret('open', 'two').data });
    await waitFor(async () => (await token()) === pullSecret('open', 'two').data?.['.dockerconfigjson'] || undefined);
  });

  it('never lists or watches secrets outside kruise-daemon-config: named GETs only', () => {
    const secretRequests = (prefix: string): number => env.api.requestCount({ userAgent: UA, pathPrefix: prefix });
    assert.equal(secretRequests('/api/v1/secrets'), 0, 'no cluster-wide secret list or watch');
    for (const ns of ['open', 'locked']) {
      const named = secretRequests(`/api/v1/namespaces/${ns}/secrets/regcred`);
      assert.ok(named > 0, `named GETs in ${ns}`);
      assert.equal(secretRequests(`/api/v1/namespaces/${ns}/secrets`), named, `only named GETs in ${ns}`);
    }
    assert.ok(secretRequests(`/api/v1/namespaces/${CONFIG_NS}/secrets`) > 0);
  });
});
