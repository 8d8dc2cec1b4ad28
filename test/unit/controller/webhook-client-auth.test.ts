// The webhook port answers only the API server: a caller without a client certificate, with one another CA signed,
// or with a name outside the allowed list is refused (401/403) before its body is read; the API server's certificate
// is answered; a rotated client CA takes over from the next connection.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import forge from 'node-forge';
import { Registry } from 'prom-client';
import { createCa, createWebhookCertificates, type CertificatePair } from '../../../src/controller/admission/certs.js';
import { parseClientCa } from '../../../src/controller/admission/client-auth.js';
import { WebhookServer } from '../../../src/controller/admission/server.js';
import { controllerMetrics, type ControllerMetrics } from '../../../src/controller/shared/metrics.js';
import { parseControllerCommandLine } from '../../../src/controller/options.js';
import { ConfigError } from '../../../src/util/config-error.js';
import { silentLogger } from '../../../src/observability/logger.js';

/** A TLS client certificate `cn` signed by `ca` (clientAuth usage), as kube-apiserver's webhook client has. */
function clientCertificate(ca: CertificatePair, cn: string): CertificatePair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 3600_000);
  cert.setSubject([{ name: 'commonName', value: cn }]);
  cert.setIssuer(forge.pki.certificateFromPem(ca.certPem).subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privateKey };
}

const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'forged', operation: 'CREATE', object: { metadata: { name: 'x' } } },
});

interface Answer {
  status: number;
  body: string;
}

describe('controller webhook server: only the API server is answered', () => {
  const serving = createWebhookCertificates({ hosts: ['127.0.0.1'], now: Date.now() });
  const clientCa = createCa(Date.now());
  const otherCa = createCa(Date.now());
  const apiServer = clientCertificate(clientCa, 'kube-apiserver-webhook-client');
  const impostor = clientCertificate(otherCa, 'kube-apiserver-webhook-client');
  const otherName = clientCertificate(clientCa, 'system:node:kd-node-1');
  let server: WebhookServer;
  let metrics: ControllerMetrics;
  let port: number;
  let handled = 0;

  before(async () => {
    metrics = controllerMetrics(new Registry());
    server = new WebhookServer({
      certPem: serving.serving.certPem,
      keyPem: serving.serving.keyPem,
      logger: silentLogger,
      metrics,
      clientAuth: { caPem: clientCa.certPem, names: ['kube-apiserver-webhook-client'] },
    });
    server.route('/validate', (request) => {
      handled++;
      return Promise.resolve({ allowed: true as const, ...(request.object ? { object: request.object } : {}) });
    });
    port = await server.listen('127.0.0.1', 0);
  });
  after(() => server.close());

  function post(client?: CertificatePair, body = REVIEW): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/validate',
          method: 'POST',
          ca: serving.ca.certPem,
          agent: false,
          headers: { 'content-type': 'application/json' },
          ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses a caller without a client certificate with 401, without calling the handler', async () => {
    const before = handled;
    const answer = await post();
    assert.equal(answer.status, 401, answer.body);
    assert.match(answer.body, /client certificate is required/);
    assert.equal(handled, before);
  });

  it('refuses a certificate another CA signed with 403', async () => {
    const before = handled;
    const answer = await post(impostor);
    assert.equal(answer.status, 403, answer.body);
    assert.match(answer.body, /not signed by the webhook client CA/);
    assert.equal(handled, before);
  });

  it('refuses a certificate of the right CA with a name outside the allowed list with 403', async () => {
    const answer = await post(otherName);
    assert.equal(answer.status, 403, answer.body);
    assert.match(answer.body, /system:node:kd-node-1.*not an allowed caller/);
  });

  it("answers the API server's certificate", async () => {
    const before = handled;
    const answer = await post(apiServer);
    assert.equal(answer.status, 200, answer.body);
    assert.equal((JSON.parse(answer.body) as { response: { uid: string } }).response.uid, 'forged');
    assert.equal(handled, before + 1);
  });

  it('counts refusals and says client authentication is on', async () => {
    const text = await metrics.webhookRefusedClients.get();
    const byCode = Object.fromEntries(text.values.map((v) => [v.labels.code, v.value]));
    assert.ok((byCode['401'] ?? 0) >= 1 && (byCode['403'] ?? 0) >= 2, JSON.stringify(byCode));
    metrics.webhookClientAuth.set(server.authenticatesClients ? 1 : 0);
    assert.equal((await metrics.webhookClientAuth.get()).values[0]?.value, 1);
  });

  it('takes a rotated client CA from the next connection on', async () => {
    server.setClientAuth({ caPem: otherCa.certPem, names: [] });
    try {
      assert.equal((await post(impostor)).status, 200);
      assert.equal((await post(apiServer)).status, 403);
    } finally {
      server.setClientAuth({ caPem: clientCa.certPem, names: ['kube-apiserver-webhook-client'] });
    }
  });

  it('checks the CA file: PEM certificates that are CAs', () => {
    assert.throws(() => parseClientCa('not pem', 'f'), /f holds no PEM certificate/);
    assert.throws(() => parseClientCa(apiServer.certPem, 'f'), /is not a CA certificate/);
    assert.match(parseClientCa(clientCa.certPem + otherCa.certPem, 'f'), /BEGIN CERTIFICATE[\s\S]+BEGIN CERTIFICATE/);
  });

  it('takes --webhook-client-ca / WEBHOOK_CLIENT_CA and refuses names without a CA', () => {
    const flag = parseControllerCommandLine(['--webhook-client-ca', '/ca.crt', '--webhook-client-names', 'a, b'], {});
    assert.ok(flag.kind === 'run');
    assert.equal(flag.options.webhook.clientCaFile, '/ca.crt');
    assert.deepEqual(flag.options.webhook.clientNames, ['a', 'b']);
    const env = parseControllerCommandLine([], { WEBHOOK_CLIENT_CA: '/env.crt' });
    assert.ok(env.kind === 'run');
    assert.equal(env.options.webhook.clientCaFile, '/env.crt');
    const none = parseControllerCommandLine([], {});
    assert.ok(none.kind === 'run');
    assert.equal(none.options.webhook.clientCaFile, undefined);
    assert.throws(() => parseControllerCommandLine(['--webhook-client-names', 'a'], {}), ConfigError);
  });
});
