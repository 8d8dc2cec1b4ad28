// Pull-secret copies against the API emulator: one copy per source shared by jobs, kept in sync with the source
// (each source watched on its own with fieldSelector metadata.name, which the emulator serves as kube-apiserver does;
// the secrets informer watches kruise-daemon-config only), released job by job and deleted with the last reference,
// the source's watch stopped with it; missing sources reported; jobs living in kruise-daemon-config use their
// secrets directly.
import assert from 'node:assert/strict';
import { PullSecretSync, copyNameFor, referencesOf } from '../../../src/controller/pullsecrets/secret-sync.js';
import type { SecretObject } from '../../../src/controller/resources.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import { KubeClient } from '../../../src/kube/client.js';
import { Informer } from '../../../src/kube/informer/informer.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { startApiServer, type ApiServer } from '../../cluster/apiserver/index.js';
import { waitFor } from '../../support/wait.js';

const CONFIG_NS = 'kruise-daemon-config';

describe('kruise-controller: pull-secret copies', function () {
  this.timeout(30_000);
  let api: ApiServer;
  let client: KubeClient;
  let secrets: Informer<SecretObject>;
  let sync: PullSecretSync;
  /** Jobs the sync asked to requeue (a source they name changed). */
  const told: string[] = [];

  before(async () => {
    api = await startApiServer();
    client = new KubeClient({
      server: api.url,
      insecureSkipTLSVerify: false,
      auth: { kind: 'none' },
      origin: 'emulator',
    });
    for (const name of [CONFIG_NS, 'team']) await client.create(CoreResources.namespaces, { metadata: { name } });
    secrets = new Informer<SecretObject>(CoreResources.secrets, client, { namespace: CONFIG_NS });
    secrets.start();
    await secrets.synced;
    sync = new PullSecretSync(client, secrets, controllerMetrics(createRegistry()));
    sync.onSourceChange((job) => told.push(job));
  });

  after(async () => {
    await sync?.stop();
    await secrets?.stop();
    client?.close();
    await api?.close();
  });

  const copy = async (): Promise<SecretObject | undefined> =>
    (await client.list<SecretObject>(CoreResources.secrets, { namespace: CONFIG_NS })).items.find(
      (s) => s.metadata?.name === copyNameFor('team', 'regcred'),
    );
  const seen = (check: (s: SecretObject | undefined) => boolean): Promise<true> =>
    waitFor(() => check(secrets.get(`${CONFIG_NS}/${copyNameFor('team', 'regcred')}`)) || undefined);

  it('makes one copy per source shared by every job that names it', async () => {
    await client.create<SecretObject>(CoreResources.secrets, {
      metadata: {
        name: 'regcred',
        namespace: 'team',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":"secret"}' },
      },
      type: 'Opaque',
      data: { token: Buffer.from('one').toString('base64') },
    });
    const a = await sync.claim('team', 'team/job-a', ['regcred']);
    await seen((s) => !!s);
    const b = await sync.claim('team', 'team/job-b', ['regcred', 'missing']);
    assert.deepEqual(a.refs, [{ namespace: CONFIG_NS, name: copyNameFor('team', 'regcred'), mode: 'batch' }]);
    assert.deepEqual(b.refs, a.refs);
    assert.deepEqual(b.missing, ['missing']);
    assert.deepEqual(b.forbidden, []);
    const c = await copy();
    assert.deepEqual(referencesOf(c!), ['team/job-a', 'team/job-b']);
    assert.equal(c?.metadata?.annotations?.['imagepulljobs.kruise.io/source-key'], 'team/regcred');
    assert.equal(c?.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], undefined);
    assert.equal(Buffer.from(c?.data?.token ?? '', 'base64').toString(), 'one');
  });

  it('follows a change of the source: its watch tells the jobs, and the next claim copies from the watch', async () => {
    const namedGets = (): number => api.requestCount({ method: 'GET', pathPrefix: '/api/v1/namespaces/team/secrets/' });
    await waitFor(() => told.includes('team/job-b') || undefined, { message: 'the watch of regcred to sync' });
    const getsBefore = namedGets();
    told.length = 0;
    const source = await client.get<SecretObject>(CoreResources.secrets, 'regcred', { namespace: 'team' });
    await client.update(CoreResources.secrets, { ...source, data: { token: Buffer.from('two').toString('base64') } });
    await waitFor(() => (told.includes('team/job-a') && told.includes('team/job-b')) || undefined);
    assert.equal(secrets.get('team/regcred'), undefined, 'the copies informer does not cache sources');
    await sync.claim('team', 'team/job-a', ['regcred']);
    assert.equal(Buffer.from((await copy())?.data?.token ?? '', 'base64').toString(), 'two');
    assert.equal(namedGets(), getsBefore + 1, "the test's own GET only: the sync read the watch");
  });

  it('releases job by job and deletes the copy with the last reference, stopping the watches of its sources', async () => {
    const watchesBefore = api.openWatches();
    await seen((s) => referencesOf(s!).length === 2);
    await sync.release('team/job-a');
    assert.deepEqual(referencesOf((await copy())!), ['team/job-b']);
    await seen((s) => referencesOf(s!).length === 1);
    assert.equal(api.openWatches(), watchesBefore, 'job-b still references regcred and missing');
    await sync.release('team/job-b');
    assert.equal(await copy(), undefined);
    await waitFor(() => api.openWatches() === watchesBefore - 2 || undefined, {
      message: 'the watches of team/regcred and team/missing to stop',
    });
  });

  it('uses secrets of a job in kruise-daemon-config as they are', async () => {
    const r = await sync.claim(CONFIG_NS, `${CONFIG_NS}/job`, ['own']);
    assert.deepEqual(r.refs, [{ namespace: CONFIG_NS, name: 'own' }]);
  });
});
