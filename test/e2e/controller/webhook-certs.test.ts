// The controller's webhook certificates on the real API server, with the controller's ServiceAccount token (RBAC:
// create secrets in kruise-system, get/update only kruise-webhook-certs; create webhook configurations, get/update
// only its own two): made once and kept in that Secret, which every replica reuses, rotated before expiry (FakeClock)
// or when the hosts change, and the CA written into the webhook configurations' caBundle (kube-apiserver validates
// them) without touching webhooks the controller does not own. No controller runs meanwhile; the Secret and the
// configurations are removed before and after (a certificate made at a clock 400 days ahead must not be served).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../../src/kube/client.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { MUTATING_WEBHOOK_CONFIGURATIONS, type SecretObject } from '../../../src/controller/resources.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import { CertManager } from '../../../src/controller/admission/cert-manager.js';
import {
  ensureWebhookConfigurations,
  MUTATING_CONFIGURATION_NAME,
  type WebhookConfiguration,
} from '../../../src/controller/admission/configurations.js';
import { servingMatches } from '../../../src/controller/admission/certs.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { FakeClock } from '../../../src/util/clock.js';
import { removeWebhookConfigurations } from '../../cluster/k8s/system.js';
import { useRealCluster, type RealCluster } from '../../support/real-cluster.js';

const DAY = 24 * 3600 * 1000;

describe('kruise-controller: webhook certificates on the real API server', function () {
  this.timeout(60_000);
  let cluster: RealCluster;
  let client: KubeClient;
  let dir: string;
  const clock = new FakeClock(Date.now());
  const metrics = controllerMetrics(createRegistry());

  async function removeCertificates(): Promise<void> {
    await cluster.admin
      .delete(CoreResources.secrets, 'kruise-webhook-certs', { namespace: 'kruise-system' })
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    removeWebhookConfigurations(cluster.layout);
  }

  before(async () => {
    cluster = await useRealCluster();
    await removeCertificates();
    client = new KubeClient(await loadKubeconfig(cluster.controllerKubeconfig), { timeoutMs: 20_000 });
    dir = await mkdtemp(join(tmpdir(), 'kd-certs-'));
  });

  after(async () => {
    client?.close();
    if (cluster) await removeCertificates();
    await rm(dir, { recursive: true, force: true });
  });

  const manager = (hosts: string[], certDir: string): CertManager =>
    new CertManager({
      client,
      namespace: 'kruise-system',
      secretName: 'kruise-webhook-certs',
      hosts,
      certDir,
      servingValidityMs: 60 * DAY,
      renewBeforeMs: 30 * DAY,
      clock,
      logger: silentLogger,
      metrics,
    });

  const secret = (): Promise<SecretObject> =>
    client.get<SecretObject>(CoreResources.secrets, 'kruise-webhook-certs', { namespace: 'kruise-system' });

  it('creates a CA and serving certificate once, stores them, and another replica reuses them', async () => {
    const first = manager(['svc.kruise-system.svc'], join(dir, 'a'));
    assert.equal(await first.ensure(), true);
    const stored = await secret();
    assert.equal(stored.type, 'kubernetes.io/tls');
    assert.equal(await readFile(join(dir, 'a', 'tls.crt'), 'utf8'), first.certificates?.serving.certPem);
    assert.equal(await first.ensure(), false, 'nothing to do the second time');

    const second = manager(['svc.kruise-system.svc'], join(dir, 'b'));
    await second.ensure();
    assert.equal(second.certificates?.serving.certPem, first.certificates?.serving.certPem);
    assert.equal((await secret()).metadata?.resourceVersion, stored.metadata?.resourceVersion);
  });

  it('rotates before expiry and when the hosts change', async () => {
    const m = manager(['svc.kruise-system.svc'], join(dir, 'c'));
    await m.ensure();
    const before = m.certificates!;
    await clock.advance(29 * DAY);
    assert.equal(await m.ensure(), false, 'more than 30 days left');
    await clock.advance(2 * DAY);
    assert.equal(await m.ensure(), true, 'renewed inside the 30-day window');
    assert.notEqual(m.certificates?.serving.certPem, before.serving.certPem);
    assert.equal(m.certificates?.ca.certPem, before.ca.certPem, 'the CA (10 years) is kept: the caBundle stays valid');
    assert.ok(servingMatches(m.certificates, ['svc.kruise-system.svc']));

    const other = manager(['svc.kruise-system.svc', '127.0.0.1'], join(dir, 'd'));
    assert.equal(await other.ensure(), true);
    assert.ok(servingMatches(other.certificates!, ['127.0.0.1']));
  });

  it('writes the CA as caBundle into its webhook configurations and leaves foreign webhooks alone', async () => {
    const m = manager(['127.0.0.1'], join(dir, 'e'));
    await m.ensure();
    const target = () => ({
      urlBase: 'https://127.0.0.1:9443',
      service: { namespace: 'kruise-system', name: 'svc', port: 443 },
      caBundlePem: m.certificates!.ca.certPem,
    });
    await ensureWebhookConfigurations(client, target());
    const config = await client.get<WebhookConfiguration>(MUTATING_WEBHOOK_CONFIGURATIONS, MUTATING_CONFIGURATION_NAME);
    const foreign = {
      name: 'foreign.example.com',
      clientConfig: { url: 'https://example.invalid/x' },
      rules: [],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    };
    await client.update(MUTATING_WEBHOOK_CONFIGURATIONS, {
      ...config,
      webhooks: [...(config.webhooks ?? []), foreign],
    } as KubeObject);
    assert.equal(await ensureWebhookConfigurations(client, target()), 0, 'up to date: nothing written');

    await clock.advance(400 * DAY); // past the serving certificate and close to nothing: everything renewed
    await m.ensure();
    await ensureWebhookConfigurations(client, target());
    const after = await client.get<WebhookConfiguration>(MUTATING_WEBHOOK_CONFIGURATIONS, MUTATING_CONFIGURATION_NAME);
    const ca = Buffer.from(m.certificates!.ca.certPem).toString('base64');
    for (const hook of after.webhooks ?? []) {
      if (hook.name === 'foreign.example.com') assert.equal(hook.clientConfig.url, 'https://example.invalid/x');
      else {
        assert.equal(hook.clientConfig.caBundle, ca, hook.name);
        assert.ok(hook.clientConfig.url?.startsWith('https://127.0.0.1:9443/'));
      }
    }
  });

  it("brings an older install's pod webhooks (every pod sent, Fail) up to date: conditions and failure policy", async () => {
    const m = manager(['127.0.0.1'], join(dir, 'f'));
    await m.ensure();
    const target = {
      urlBase: 'https://127.0.0.1:9443',
      service: { namespace: 'kruise-system', name: 'svc', port: 443 },
      caBundlePem: m.certificates!.ca.certPem,
    };
    await ensureWebhookConfigurations(client, target);
    const config = await client.get<WebhookConfiguration>(MUTATING_WEBHOOK_CONFIGURATIONS, MUTATING_CONFIGURATION_NAME);
    const older = (config.webhooks ?? []).map((h) => {
      const { matchConditions: _dropped, ...rest } = h;
      return { ...rest, failurePolicy: 'Fail' as const };
    });
    await client.update(MUTATING_WEBHOOK_CONFIGURATIONS, { ...config, webhooks: older } as KubeObject);
    assert.equal(await ensureWebhookConfigurations(client, target), 1, 'the mutating configuration rewritten');
    const after = await client.get<WebhookConfiguration>(MUTATING_WEBHOOK_CONFIGURATIONS, MUTATING_CONFIGURATION_NAME);
    const hook = (name: string) => after.webhooks?.find((h) => h.name === name);
    assert.ok(hook('mpod.kb.io')?.matchConditions?.length, 'mpod.kb.io has its conditions again');
    assert.equal(hook('mpod.kb.io')?.failurePolicy, 'Fail');
    assert.ok(hook('mpod-persistentpodstate.kb.io')?.matchConditions?.length);
    assert.equal(hook('mpod-persistentpodstate.kb.io')?.failurePolicy, 'Ignore');
    assert.equal(hook('mnodeimage.kb.io')?.matchConditions, undefined, 'no conditions where none are defined');
    assert.equal(await ensureWebhookConfigurations(client, target), 0, 'then up to date');
  });
});
