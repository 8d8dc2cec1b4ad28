// The admission webhook server as kube-apiserver's HTTP client meets it: kept-alive connections.
import assert from 'node:assert/strict';
import { request as httpsRequest, Agent } from 'node:https';
import { Registry } from 'prom-client';
import { createWebhookCertificates } from '../../../src/controller/admission/certs.js';
import { API_SERVER_IDLE_CONN_TIMEOUT_MS, WebhookServer } from '../../../src/controller/admission/server.js';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import { silentLogger } from '../../../src/observability/logger.js';

describe('controller webhook server', () => {
  const certs = createWebhookCertificates({ hosts: ['127.0.0.1'], now: Date.now() });
  let server: WebhookServer;
  let port: number;
  before(async () => {
    server = new WebhookServer({
      certPem: certs.serving.certPem,
      keyPem: certs.serving.keyPem,
      logger: silentLogger,
      metrics: controllerMetrics(new Registry()),
    });
    port = await server.listen('127.0.0.1', 0);
  });
  after(() => server.close());

  it('keeps an idle connection open longer than the API server does, so the API server never writes into a closed one', async () => {
    const agent = new Agent({ keepAlive: true, ca: certs.ca.certPem });
    try {
      const keepAlive = await new Promise<string>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.headers['keep-alive'] ?? '')));
        });
        req.on('error', reject);
        req.end();
      });
      const seconds = Number(/timeout=(\d+)/.exec(keepAlive)?.[1]);
      assert.ok(
        seconds * 1000 > API_SERVER_IDLE_CONN_TIMEOUT_MS,
        `idle connections kept ${keepAlive}, the API server's client keeps them ${API_SERVER_IDLE_CONN_TIMEOUT_MS} ms`,
      );
    } finally {
      agent.destroy();
    }
  });
});
