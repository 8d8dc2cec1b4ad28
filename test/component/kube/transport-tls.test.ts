// The light client over real TLS: a CA-verified server certificate, a client certificate (mutual TLS), a bearer
// token re-read from its file after a 401, request timeouts; against an in-process https server with openssl-made certs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { RequestTimeoutError } from '../../../src/kube/transport.js';

const run = promisify(execFile);

async function openssl(dir: string, ...args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

describe('KubeClient over TLS (component)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: https.Server;
  let port: number;
  let validToken = 'token-1';
  const seen: { auth?: string | undefined; clientCN?: string; ua?: string | undefined }[] = [];
  let stallMs = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kd-tls-'));
    await openssl(
      dir,
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '1',
      '-subj',
      '/CN=test-ca',
    );
    await writeFile(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:kubernetes\n');
    for (const [name, cn, ext] of [
      ['server', 'kubernetes', true],
      ['client', 'system:node:n1', false],
    ] as const) {
      await openssl(
        dir,
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${cn}`,
      );
      await openssl(
        dir,
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.crt`,
        '-days',
        '1',
        ...(ext ? ['-extfile', 'san.ext'] : []),
      );
    }
    server = https.createServer(
      {
        key: await readFile(join(dir, 'server.key')),
        cert: await readFile(join(dir, 'server.crt')),
        ca: await readFile(join(dir, 'ca.crt')),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({
          auth: req.headers.authorization,
          clientCN: String(peer.subject?.CN),
          ua: req.headers['user-agent'],
        });
        const answer = (): void => {
          res.setHeader('Content-Type', 'application/json');
          if (req.headers.authorization !== `Bearer ${validToken}`) {
            res.statusCode = 401;
            res.end(JSON.stringify({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' }));
          } else if (req.url?.endsWith('/missing')) {
            res.statusCode = 404;
            res.end(
              JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'pods "missing" not found' }),
            );
          } else {
            res.end(JSON.stringify({ kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } }));
          }
        };
        if (stallMs) setTimeout(answer, stallMs);
        else answer();
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    await writeFile(join(dir, 'token'), 'token-1\n');
    await writeFile(
      join(dir, 'kubeconfig'),
      `current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:${port}", certificate-authority: ca.crt}}]
users: [{name: u, user: {client-certificate: client.crt, client-key: client.key, tokenFile: token}}]
`,
    );
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('verifies the server, presents the client certificate and the token, keeps the connection alive', async () => {
    const client = new KubeClient(await loadKubeconfig(join(dir, 'kubeconfig')), { userAgent: 'kd-test/1' });
    try {
      const pod = await client.get(CoreResources.pods, 'p', { namespace: 'ns' });
      assert.equal(pod.metadata?.name, 'p');
      await assert.rejects(client.get(CoreResources.pods, 'missing', { namespace: 'ns' }), (e: unknown) =>
        isNotFound(e),
      );
      const last = seen[seen.length - 1]!;
      assert.equal(last.clientCN, 'system:node:n1');
      assert.equal(last.auth, 'Bearer token-1');
      assert.equal(last.ua, 'kd-test/1');
    } finally {
      client.close();
    }
  });

  it('after a 401 re-reads a rotated token file and retries once', async () => {
    const client = new KubeClient(await loadKubeconfig(join(dir, 'kubeconfig')));
    try {
      await client.get(CoreResources.pods, 'p', { namespace: 'ns' });
      validToken = 'token-2';
      await writeFile(join(dir, 'token'), 'token-2\n');
      const before = seen.length;
      await client.get(CoreResources.pods, 'p', { namespace: 'ns' });
      assert.deepEqual(
        seen.slice(before).map((s) => s.auth),
        ['Bearer token-1', 'Bearer token-2'],
      );
    } finally {
      client.close();
    }
  });

  it('refuses a server whose certificate the CA did not sign', async () => {
    const conn = await loadKubeconfig(join(dir, 'kubeconfig'));
    const client = new KubeClient({ ...conn, ca: await readFile(join(dir, 'client.crt')) });
    try {
      await assert.rejects(client.get(CoreResources.pods, 'p', { namespace: 'ns' }), /certificate/i);
    } finally {
      client.close();
    }
  });

  it('times a stalled request out with a clear error', async () => {
    const client = new KubeClient(await loadKubeconfig(join(dir, 'kubeconfig')), { timeoutMs: 300 });
    stallMs = 2000;
    try {
      await assert.rejects(
        client.get(CoreResources.pods, 'p', { namespace: 'ns' }),
        (e: unknown) => e instanceof RequestTimeoutError && /no answer within 300 ms/.test(e.message),
      );
    } finally {
      stallMs = 0;
      client.close();
    }
  });
});
