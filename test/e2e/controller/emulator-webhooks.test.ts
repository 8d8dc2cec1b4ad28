// emulator: it tests the API emulator's own webhook calls (test infrastructure), not our controller on a cluster.
// The API emulator calling admission webhooks as kube-apiserver does, against the controller's own HTTPS webhook
// server (test handlers): JSON patches applied in order, denials with the webhook's code and message, failurePolicy,
// timeoutSeconds, caBundle verification, namespaceSelector, mutating before validating.
import assert from 'node:assert/strict';
import { KubeClient } from '../../../src/kube/client.js';
import { ApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import {
  MUTATING_WEBHOOK_CONFIGURATIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from '../../../src/controller/resources.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import type { AdmissionDecision, AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import { createWebhookCertificates } from '../../../src/controller/admission/certs.js';
import { WebhookServer } from '../../../src/controller/admission/server.js';
import { startApiServer, type ApiServer } from '../../cluster/apiserver/index.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

describe('API emulator: calling admission webhooks', function () {
  this.timeout(60_000);
  let api: ApiServer;
  let client: KubeClient;
  let server: WebhookServer;
  let port: number;
  let caBundle: string;
  let wrongCa: string;
  const seen: string[] = [];
  let slowMs = 0;

  before(async () => {
    api = await startApiServer();
    client = new KubeClient(
      { server: api.url, insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: 'emulator' },
      { timeoutMs: 20_000 },
    );
    const certs = createWebhookCertificates({ hosts: ['127.0.0.1'], now: Date.now() });
    caBundle = Buffer.from(certs.ca.certPem).toString('base64');
    wrongCa = Buffer.from(createWebhookCertificates({ hosts: ['127.0.0.1'], now: Date.now() }).ca.certPem).toString(
      'base64',
    );
    server = new WebhookServer({
      certPem: certs.serving.certPem,
      keyPem: certs.serving.keyPem,
      logger: silentLogger,
      metrics: controllerMetrics(createRegistry()),
    });
    const cm = (r: AdmissionRequest): ConfigMap => structuredClone(r.object as ConfigMap);
    server.route('/add-a', (r): AdmissionDecision => {
      seen.push(`add-a:${r.operation}`);
      const o = cm(r);
      o.data = { ...o.data, a: '1' };
      return { allowed: true, object: o };
    });
    server.route('/add-b-after-a', (r): AdmissionDecision => {
      const o = cm(r);
      seen.push(`add-b:${o.data?.a ?? 'no-a'}`);
      o.data = { ...o.data, b: `${o.data?.a ?? ''}+b` };
      return { allowed: true, object: o };
    });
    server.route('/deny-bad', (r): AdmissionDecision => {
      const o = cm(r);
      seen.push(`deny:${o.data?.a ?? 'no-a'}`);
      return o.data?.bad ? { allowed: false, code: 400, message: 'data.bad: must not be set' } : { allowed: true };
    });
    server.route('/slow', async (): Promise<AdmissionDecision> => {
      await new Promise((resolve) => setTimeout(resolve, slowMs));
      return { allowed: true };
    });
    port = await server.listen('127.0.0.1', 0);
  });

  after(async () => {
    await server?.close();
    client?.close();
    await api?.close();
  });

  afterEach(async () => {
    for (const rt of [MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS]) {
      for (const o of (await client.list(rt)).items) await client.delete(rt, o.metadata?.name ?? '');
    }
    seen.length = 0;
  });

  function hook(name: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      name,
      clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    };
  }

  async function register(
    mutating: Record<string, unknown>[],
    validating: Record<string, unknown>[] = [],
  ): Promise<void> {
    if (mutating.length)
      await client.create(MUTATING_WEBHOOK_CONFIGURATIONS, {
        metadata: { name: 'm' },
        webhooks: mutating,
      } as KubeObject);
    if (validating.length)
      await client.create(VALIDATING_WEBHOOK_CONFIGURATIONS, {
        metadata: { name: 'v' },
        webhooks: validating,
      } as KubeObject);
  }

  it('applies mutating webhooks in order, each seeing the previous patch, before validating ones', async () => {
    await register([hook('a.test', '/add-a'), hook('b.test', '/add-b-after-a')], [hook('v.test', '/deny-bad')]);
    const created = await client.create<ConfigMap>(CoreResources.configMaps, {
      metadata: { name: 'cm1', namespace: 'default' },
      data: { x: 'y' },
    });
    assert.deepEqual(created.data, { x: 'y', a: '1', b: '1+b' });
    assert.deepEqual(seen, ['add-a:CREATE', 'add-b:1', 'deny:1']);
  });

  it('denies with the webhook code and "admission webhook ... denied the request"', async () => {
    await register([], [hook('v.test', '/deny-bad')]);
    await assert.rejects(
      client.create(CoreResources.configMaps, {
        metadata: { name: 'cm2', namespace: 'default' },
        data: { bad: 'x' },
      }),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 400);
        assert.match(err.message, /: admission webhook "v.test" denied the request: data.bad: must not be set$/);
        return true;
      },
    );
  });

  it('fails closed (500) or is ignored by failurePolicy when the call fails: wrong CA, timeout, no server', async () => {
    await register(
      [],
      [hook('v.test', '/deny-bad', { clientConfig: { url: `https://127.0.0.1:${port}/deny-bad`, caBundle: wrongCa } })],
    );
    await assert.rejects(
      client.create(CoreResources.configMaps, { metadata: { name: 'cm3', namespace: 'default' } }),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.code, 500);
        assert.match(err.message, /failed calling webhook "v.test"/);
        return true;
      },
    );
    await client.delete(VALIDATING_WEBHOOK_CONFIGURATIONS, 'v');
    slowMs = 2500;
    await register(
      [],
      [
        hook('slow.test', '/slow', { timeoutSeconds: 1, failurePolicy: 'Ignore' }),
        hook('gone.test', '/x', { clientConfig: { url: 'https://127.0.0.1:1/x', caBundle }, failurePolicy: 'Ignore' }),
      ],
    );
    await client.create(CoreResources.configMaps, { metadata: { name: 'cm4', namespace: 'default' } });
    assert.deepEqual(
      api.webhooks.calls.slice(-2).map((c) => c.outcome),
      ['ignored', 'ignored'],
    );
  });

  it('honours namespaceSelector and skips non-matching operations', async () => {
    await client.create(CoreResources.namespaces, { metadata: { name: 'wh-team-a', labels: { team: 'a' } } });
    await register([hook('a.test', '/add-a', { namespaceSelector: { matchLabels: { team: 'a' } } })]);
    const inA = await client.create<ConfigMap>(CoreResources.configMaps, {
      metadata: { name: 'cm5', namespace: 'wh-team-a' },
    });
    const inDefault = await client.create<ConfigMap>(CoreResources.configMaps, {
      metadata: { name: 'cm5', namespace: 'default' },
    });
    assert.deepEqual(inA.data, { a: '1' });
    assert.equal(inDefault.data, undefined);
    await client.delete(CoreResources.configMaps, 'cm5', { namespace: 'wh-team-a' });
    assert.deepEqual(seen, ['add-a:CREATE']);
  });
});
