// Pull-secret copies on the real API server, with the controller's ServiceAccount token (RBAC: secrets of
// kruise-daemon-config, and the pull-secret reader ClusterRole bound in the jobs' namespace): one copy per source
// shared by jobs, kept in sync with the source (each source watched on its own with fieldSelector metadata.name; the
// secrets informer watches kruise-daemon-config only), released job by job and deleted with the last reference, the
// source's watch stopped with it; missing sources reported; jobs living in kruise-daemon-config use their secrets
// directly. The sync's requests are seen on its own client's wire (a recording transport).
import assert from 'node:assert/strict';
import { PullSecretSync, copyNameFor, referencesOf } from '../../../src/controller/pullsecrets/secret-sync.js';
import type { SecretObject } from '../../../src/controller/resources.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { Informer } from '../../../src/kube/informer/informer.js';
import { CoreResources } from '../../../src/kube/resource.js';
import {
  HttpTransport,
  type HttpRequest,
  type HttpResponse,
  type HttpStream,
  type Transport,
} from '../../../src/kube/transport.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';
import { freshNamespace, grantPullSecretReader, removeNamespace } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';

const CONFIG_NS = 'kruise-daemon-config';
const TEAM = 'e2e-pull-secrets';

/** The wire of one client: every request (method, path and query) and the watch streams open right now. */
class RecordingTransport implements Transport {
  readonly requests: string[] = [];
  readonly openStreams = new Set<string>();

  constructor(private readonly inner: Transport) {}

  async request(req: HttpRequest): Promise<HttpResponse> {
    this.requests.push(`${req.method} ${req.path}`);
    return await this.inner.request(req);
  }

  async stream(req: HttpRequest): Promise<HttpStream> {
    const key = `${req.method} ${req.path} #${this.requests.length}`;
    this.requests.push(`${req.method} ${req.path}`);
    const stream = await this.inner.stream(req);
    this.openStreams.add(key);
    stream.body.once('close', () => this.openStreams.delete(key));
    return stream;
  }

  close(): void {
    this.inner.close();
  }

  /** Watches open now whose path starts with `prefix`. */
  watches(prefix: string): number {
    return [...this.openStreams].filter((s) => s.startsWith(`GET ${prefix}`)).length;
  }
}

describe('kruise-controller: pull-secret copies on the real API server', function () {
  this.timeout(60_000);
  let cluster: RealCluster;
  /** The test's own client (cluster-admin). */
  let admin: KubeClient;
  /** The sync's client: the controller's ServiceAccount, its wire recorded. */
  let client: KubeClient;
  let wire: RecordingTransport;
  let secrets: Informer<SecretObject>;
  let sync: PullSecretSync;
  /** Jobs the sync asked to requeue (a source they name changed). */
  const told: string[] = [];

  before(async () => {
    cluster = await useRealCluster();
    admin = cluster.admin;
    await freshNamespace(admin, TEAM);
    await grantPullSecretReader(admin, TEAM);
    for (const name of [copyNameFor(TEAM, 'regcred'), 'own']) {
      await admin.delete(CoreResources.secrets, name, { namespace: CONFIG_NS }).catch(() => undefined);
    }
    const connection = await loadKubeconfig(cluster.controllerKubeconfig);
    wire = new RecordingTransport(new HttpTransport(connection, { userAgent: 'kruise-controller' }));
    client = new KubeClient(connection, { transport: wire });
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
    if (cluster) await removeNamespace(admin, TEAM);
  });

  const copy = async (): Promise<SecretObject | undefined> =>
    (await admin.list<SecretObject>(CoreResources.secrets, { namespace: CONFIG_NS })).items.find(
      (s) => s.metadata?.name === copyNameFor(TEAM, 'regcred'),
    );
  const seen = (check: (s: SecretObject | undefined) => boolean): Promise<true> =>
    waitFor(() => check(secrets.get(`${CONFIG_NS}/${copyNameFor(TEAM, 'regcred')}`)) || undefined);

  it('makes one copy per source shared by every job that names it', async () => {
    await admin.create<SecretObject>(CoreResources.secrets, {
      metadata: {
        name: 'regcred',
        namespace: TEAM,
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":"secret"}' },
      },
      type: 'Opaque',
      data: { token: Buffer.from('one').toString('base64') },
    });
    const a = await sync.claim(TEAM, `${TEAM}/job-a`, ['regcred']);
    await seen((s) => !!s);
    const b = await sync.claim(TEAM, `${TEAM}/job-b`, ['regcred', 'missing']);
    assert.deepEqual(a.refs, [{ namespace: CONFIG_NS, name: copyNameFor(TEAM, 'regcred'), mode: 'batch' }]);
    assert.deepEqual(b.refs, a.refs);
    assert.deepEqual(b.missing, ['missing']);
    assert.deepEqual(b.forbidden, []);
    const c = await copy();
    assert.deepEqual(referencesOf(c!), [`${TEAM}/job-a`, `${TEAM}/job-b`]);
    assert.equal(c?.metadata?.annotations?.['imagepulljobs.kruise.io/source-key'], `${TEAM}/regcred`);
    assert.equal(c?.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], undefined);
    assert.equal(Buffer.from(c?.data?.token ?? '', 'base64').toString(), 'one');
  });

  it('follows a change of the source: its watch tells the jobs, and the next claim copies from the watch', async () => {
    const namedGets = (): number =>
      wire.requests.filter((r) => r.startsWith(`GET /api/v1/namespaces/${TEAM}/secrets/`)).length;
    await waitFor(() => told.includes(`${TEAM}/job-b`) || undefined, { message: 'the watch of regcred to sync' });
    const getsBefore = namedGets();
    told.length = 0;
    const source = await admin.get<SecretObject>(CoreResources.secrets, 'regcred', { namespace: TEAM });
    await admin.update(CoreResources.secrets, { ...source, data: { token: Buffer.from('two').toString('base64') } });
    await waitFor(() => (told.includes(`${TEAM}/job-a`) && told.includes(`${TEAM}/job-b`)) || undefined);
    assert.equal(secrets.get(`${TEAM}/regcred`), undefined, 'the copies informer does not cache sources');
    await sync.claim(TEAM, `${TEAM}/job-a`, ['regcred']);
    assert.equal(Buffer.from((await copy())?.data?.token ?? '', 'base64').toString(), 'two');
    assert.equal(namedGets(), getsBefore, 'no GET of the source: the sync read the watch');
  });

  it('releases job by job and deletes the copy with the last reference, stopping the watches of its sources', async () => {
    const sourceWatches = (): number => wire.watches(`/api/v1/namespaces/${TEAM}/secrets?`);
    assert.equal(sourceWatches(), 2, 'one watch each of regcred and missing');
    await seen((s) => referencesOf(s!).length === 2);
    await sync.release(`${TEAM}/job-a`);
    assert.deepEqual(referencesOf((await copy())!), [`${TEAM}/job-b`]);
    await seen((s) => referencesOf(s!).length === 1);
    assert.equal(sourceWatches(), 2, 'job-b still references regcred and missing');
    await sync.release(`${TEAM}/job-b`);
    assert.equal(await copy(), undefined);
    await waitFor(() => sourceWatches() === 0 || undefined, {
      message: `the watches of ${TEAM}/regcred and ${TEAM}/missing to stop`,
    });
    assert.equal(wire.watches(`/api/v1/namespaces/${CONFIG_NS}/secrets?`), 1, 'the copies informer watches on');
  });

  it('uses secrets of a job in kruise-daemon-config as they are', async () => {
    const r = await sync.claim(CONFIG_NS, `${CONFIG_NS}/job`, ['own']);
    assert.deepEqual(r.refs, [{ namespace: CONFIG_NS, name: 'own' }]);
  });
});
