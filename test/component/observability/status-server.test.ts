// The status server in-process on loopback: routes, methods, verbose bodies, metrics content type.
import assert from 'node:assert/strict';
import { Counter } from 'prom-client';
import { HealthRegistry } from '../../../src/observability/health.js';
import { StatusServer } from '../../../src/observability/status-server.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { createRegistry } from '../../../src/observability/metrics.js';

describe('StatusServer', () => {
  const liveness = new HealthRegistry();
  const readiness = new HealthRegistry();
  const metrics = createRegistry();
  new Counter({ name: 'kruise_daemon_test_total', help: 'a test counter', registers: [metrics] }).inc(3);
  const server = new StatusServer({ liveness, readiness, metrics, logger: silentLogger });
  let base = '';
  let runtimeUp = true;
  let warm = false;

  before(async () => {
    liveness.add('runtime', () => {
      if (!runtimeUp) throw new Error('runtime at /x.sock does not answer');
    });
    readiness.add('warm', () => {
      if (!warm) throw new Error('not warmed up');
    });
    const bound = await server.listen({ host: '127.0.0.1', port: 0 });
    assert.equal(bound.host, '127.0.0.1');
    assert.ok(bound.port > 0);
    base = `http://127.0.0.1:${bound.port}`;
  });
  after(() => server.close());

  it('/livez follows the liveness checks only, with the reason in the body', async () => {
    runtimeUp = true;
    warm = false;
    let res = await fetch(`${base}/livez`);
    assert.equal(res.status, 200, 'a readiness check failing is no liveness failure');
    assert.equal(await res.text(), 'ok\n');
    runtimeUp = false;
    res = await fetch(`${base}/livez`);
    assert.equal(res.status, 500);
    assert.equal(await res.text(), '[-]runtime failed: runtime at /x.sock does not answer\nunhealthy\n');
    runtimeUp = true;
  });

  for (const path of ['/readyz', '/healthz']) {
    it(`${path} needs liveness and readiness checks; ?verbose lists them`, async () => {
      warm = false;
      let res = await fetch(`${base}${path}`);
      assert.equal(res.status, 500);
      assert.match(await res.text(), /\[\+\]runtime ok\n\[-\]warm failed: not warmed up/);
      warm = true;
      res = await fetch(`${base}${path}?verbose`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), '[+]runtime ok\n[+]warm ok\nhealthy\n');
    });
  }

  it('/metrics serves the private registry in the Prometheus text format', async () => {
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(await res.text(), /^kruise_daemon_test_total 3$/m);
  });

  it('answers HEAD without a body, 405 for other methods, 404 elsewhere', async () => {
    const head = await fetch(`${base}/healthz`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const missing = await fetch(`${base}/debug/pprof`);
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /try \/livez, \/readyz, \/healthz/);
  });

  it('refuses a second listener on a port in use with an error, not a crash', async () => {
    const other = new StatusServer({ liveness, readiness, metrics, logger: silentLogger });
    const port = Number(new URL(base).port);
    await assert.rejects(other.listen({ host: '127.0.0.1', port }), /EADDRINUSE/);
  });
});
