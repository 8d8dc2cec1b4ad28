import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTokenSource } from '../../../src/kube/credentials/connection.js';
import { loadInCluster } from '../../../src/kube/credentials/in-cluster.js';
import { KubeconfigError, loadKubeconfig, loadKubeconfigFromString } from '../../../src/kube/credentials/kubeconfig.js';
import { loadConnection } from '../../../src/kube/credentials/load.js';
import { FakeClock } from '../../../src/util/clock.js';

const CA = '-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function kubeconfig(cluster: string, user: string, extra = ''): string {
  return `apiVersion: v1
kind: Config
current-context: main
contexts:
- name: main
  context: {cluster: c1, user: u1, namespace: team-a}
- name: other
  context: {cluster: c2, user: u2}
clusters:
- name: c1
  cluster:
${cluster}
- name: c2
  cluster:
    server: http://127.0.0.1:8080/
users:
- name: u1
  user:
${user}
- name: u2
  user: {}
${extra}`;
}

describe('kubeconfig loading', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kd-kubeconfig-'));
    await mkdir(join(dir, 'pki'));
    await writeFile(join(dir, 'pki', 'ca.crt'), CA);
    await writeFile(join(dir, 'pki', 'client.crt'), CERT);
    await writeFile(join(dir, 'pki', 'client.key'), KEY);
    await writeFile(join(dir, 'token'), 'file-token-1\n');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads inline certificates and a token from the current context', async () => {
    const text = kubeconfig(
      `    server: https://api.example:6443\n    certificate-authority-data: ${b64(CA)}\n    tls-server-name: kubernetes`,
      `    client-certificate-data: ${b64(CERT)}\n    client-key-data: ${b64(KEY)}\n    token: abc123`,
    );
    const c = await loadKubeconfigFromString(text);
    assert.equal(c.server, 'https://api.example:6443');
    assert.equal(c.ca?.toString(), CA);
    assert.equal(c.cert?.toString(), CERT);
    assert.equal(c.key?.toString(), KEY);
    assert.equal(c.tlsServerName, 'kubernetes');
    assert.equal(c.namespace, 'team-a');
    assert.equal(c.auth.kind, 'token');
    assert.equal(c.auth.kind === 'token' && (await c.auth.source.token()), 'abc123');
    assert.doesNotMatch(c.origin, /abc123/);
  });

  it('reads certificate files and a tokenFile relative to the kubeconfig', async () => {
    const path = join(dir, 'config');
    await writeFile(
      path,
      kubeconfig(
        '    server: https://10.0.0.1\n    certificate-authority: pki/ca.crt',
        '    client-certificate: pki/client.crt\n    client-key: pki/client.key\n    tokenFile: token',
      ),
    );
    const c = await loadKubeconfig(path);
    assert.equal(c.ca?.toString(), CA);
    assert.equal(c.cert?.toString(), CERT);
    assert.equal(c.key?.toString(), KEY);
    assert.ok(c.auth.kind === 'token' && c.auth.source instanceof FileTokenSource);
    assert.equal(await c.auth.source.token(), 'file-token-1');
  });

  it('uses a named context, plain http and insecure-skip-tls-verify', async () => {
    const text = kubeconfig(
      '    server: https://api.example\n    insecure-skip-tls-verify: true',
      '    username: admin\n    password: pw',
    );
    const other = await loadKubeconfigFromString(text, { context: 'other' });
    assert.equal(other.server, 'http://127.0.0.1:8080');
    assert.equal(other.auth.kind, 'none');
    const main = await loadKubeconfigFromString(text);
    assert.equal(main.insecureSkipTLSVerify, true);
    assert.deepEqual(main.auth, { kind: 'basic', username: 'admin', password: 'pw' });
  });

  it('merges a KUBECONFIG list: first file wins, missing files skipped', async () => {
    const a = join(dir, 'a.yaml');
    const b = join(dir, 'b.yaml');
    await writeFile(a, 'current-context: x\ncontexts:\n- name: x\n  context: {cluster: cb}\n');
    await writeFile(b, 'current-context: y\nclusters:\n- name: cb\n  cluster: {server: "http://b:1"}\n');
    const c = await loadKubeconfig(`${a}:${join(dir, 'missing.yaml')}:${b}`);
    assert.equal(c.server, 'http://b:1');
    assert.match(c.origin, /context x/);
  });

  it('refuses credential plugins and bad input with clear messages', async () => {
    const cluster = '    server: https://api.example';
    const cases: [string, RegExp][] = [
      [
        kubeconfig(cluster, '    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws'),
        /exec credential plugin \(command aws\).*not support/,
      ],
      [kubeconfig(cluster, '    auth-provider:\n      name: gcp'), /auth-provider plugin "gcp"/],
      [
        kubeconfig(cluster, `    client-certificate-data: ${b64(CERT)}`),
        /client-certificate and client-key must be given together/,
      ],
      [
        kubeconfig(cluster, '    client-certificate-data: bm90IHBlbQ==\n    client-key-data: bm90IHBlbQ=='),
        /client-certificate-data is not PEM/,
      ],
      [kubeconfig('    server: ftp://x', '    token: t'), /must be an http:\/\/ or https:\/\/ URL/],
      [
        kubeconfig('    certificate-authority: /nonexistent/ca.crt\n    server: https://x', '    token: t'),
        /cannot read certificate-authority \/nonexistent\/ca.crt: ENOENT/,
      ],
      ['current-context: nope\ncontexts: []\n', /context "nope" not found \(contexts: none\)/],
      ['clusters: {a: 1}\n', /clusters must be a list/],
      [': : :\n  - [', /not valid YAML/],
      [
        'contexts:\n- name: x\n  context: {cluster: missing}\ncurrent-context: x\n',
        /cluster "missing" \(context "x"\) not found/,
      ],
    ];
    for (const [text, message] of cases) {
      await assert.rejects(
        loadKubeconfigFromString(text),
        (err: unknown) => err instanceof KubeconfigError && message.test(err.message),
        `expected ${message}`,
      );
    }
  });

  it('a token file is re-read after its refresh period and after invalidate()', async () => {
    const clock = new FakeClock(0);
    const path = join(dir, 'rotating');
    await writeFile(path, 'one');
    const source = new FileTokenSource(path, clock, 60_000);
    assert.equal(await source.token(), 'one');
    await writeFile(path, 'two');
    assert.equal(await source.token(), 'one', 'cached within the period');
    await clock.advance(60_000);
    assert.equal(await source.token(), 'two');
    await writeFile(path, 'three');
    source.invalidate();
    assert.equal(await source.token(), 'three');
    await rm(path);
    source.invalidate();
    assert.equal(await source.token(), 'three', 'a vanished file keeps the last good token');
    await assert.rejects(new FileTokenSource(join(dir, 'none')).token(), /cannot read token file .*ENOENT/);
  });
});

describe('in-cluster credentials', () => {
  let sa: string;
  before(async () => {
    sa = await mkdtemp(join(tmpdir(), 'kd-sa-'));
    await writeFile(join(sa, 'token'), 'sa-token');
    await writeFile(join(sa, 'ca.crt'), CA);
    await writeFile(join(sa, 'namespace'), 'kruise-daemon-config\n');
  });
  after(async () => {
    await rm(sa, { recursive: true, force: true });
  });

  it('reads the service account and the service address', async () => {
    const c = await loadInCluster({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      dir: sa,
    });
    assert.equal(c.server, 'https://[fd00::1]:443');
    assert.equal(c.ca?.toString(), CA);
    assert.equal(c.namespace, 'kruise-daemon-config');
    assert.equal(c.auth.kind === 'token' && (await c.auth.source.token()), 'sa-token');
  });

  it('says what is missing', async () => {
    await assert.rejects(
      loadInCluster({ env: {}, dir: sa }),
      /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set/,
    );
    await assert.rejects(
      loadInCluster({ env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: 'x' }, dir: sa }),
      /not a port number/,
    );
    await assert.rejects(
      loadInCluster({ env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' }, dir: join(sa, 'none') }),
      /service-account token: cannot read token file/,
    );
  });

  it('loadConnection prefers KUBECONFIG, then in-cluster, then ~/.kube/config', async () => {
    const cfg = join(sa, 'kc');
    await writeFile(
      cfg,
      'current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\nclusters:\n- name: c\n  cluster: {server: "http://k:1"}\n',
    );
    const env = { KUBECONFIG: cfg, KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '443' };
    assert.equal((await loadConnection({ env, serviceAccountDir: sa })).server, 'http://k:1');
    assert.equal(
      (await loadConnection({ env: { ...env, KUBECONFIG: '' }, serviceAccountDir: sa })).server,
      'https://h:443',
    );
    await mkdir(join(sa, 'home', '.kube'), { recursive: true });
    await writeFile(join(sa, 'home', '.kube', 'config'), await (await import('node:fs/promises')).readFile(cfg));
    assert.equal((await loadConnection({ env: {}, home: join(sa, 'home') })).server, 'http://k:1');
    await assert.rejects(loadConnection({ env: {}, home: join(sa, 'nohome') }), /no Kubernetes credentials found/);
  });
});
