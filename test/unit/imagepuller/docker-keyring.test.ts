import assert from 'node:assert/strict';
import {
  credentialsFor,
  credentialsOfSecret,
  type RegistryCredential,
} from '../../../src/daemon/imagepuller/docker-keyring.js';
import { dockerConfigSecret } from './fakes.js';

const cred = (key: string, username = key): RegistryCredential => ({ key, username, password: 'p' });

describe('imagepuller docker keyring', () => {
  it('reads dockerconfigjson and dockercfg secrets, user/password or auth', () => {
    const json = credentialsOfSecret(
      dockerConfigSecret('a', {
        'reg.example.com': { username: 'u', password: 'p' },
        'https://index.docker.io/v1/': { auth: Buffer.from('hub:secret:with:colons').toString('base64') },
      }),
    );
    assert.deepEqual(json, [
      { key: 'reg.example.com', username: 'u', password: 'p' },
      { key: 'https://index.docker.io/v1/', username: 'hub', password: 'secret:with:colons' },
    ]);
    const cfg = credentialsOfSecret({
      metadata: { name: 'b', namespace: 'kruise-daemon-config' },
      type: 'kubernetes.io/dockercfg',
      data: {
        '.dockercfg': Buffer.from(JSON.stringify({ 'r:5000': { username: 'x', password: 'y' } })).toString('base64'),
      },
    });
    assert.deepEqual(cfg, [{ key: 'r:5000', username: 'x', password: 'y' }]);
  });

  it('names the secret and the problem for malformed secrets, never the content', () => {
    const base = { metadata: { name: 's', namespace: 'kruise-daemon-config' } };
    assert.throws(
      () => credentialsOfSecret({ ...base, type: 'Opaque', data: {} }),
      /kruise-daemon-config\/s has type "Opaque"/,
    );
    assert.throws(
      () =>
        credentialsOfSecret({
          ...base,
          type: 'kubernetes.io/dockerconfigjson',
          data: { '.dockerconfigjson': 'bm90IGpzb24=' },
        }),
      /kruise-daemon-config\/s: .dockerconfigjson is not base64-encoded JSON/,
    );
    const noColon = dockerConfigSecret('s', { r: { auth: Buffer.from('topsecret').toString('base64') } });
    assert.throws(
      () => credentialsOfSecret(noColon),
      (err: Error) => !err.message.includes('topsecret'),
    );
  });

  it('matches as kubelet: host, port, path prefix, wildcard labels, Docker Hub aliases; most specific first', () => {
    const all = [
      cred('reg.example.com'),
      cred('reg.example.com/team'),
      cred('reg.example.com:5000'),
      cred('*.example.com'),
      cred('https://index.docker.io/v1/'),
      cred('other.io'),
    ];
    const users = (repo: string): Array<string | undefined> => credentialsFor(repo, all).map((c) => c.username);
    assert.deepEqual(users('reg.example.com/team/app'), ['reg.example.com/team', 'reg.example.com', '*.example.com']);
    assert.deepEqual(users('reg.example.com/other/app'), ['reg.example.com', '*.example.com']);
    assert.deepEqual(users('reg.example.com:5000/app'), ['reg.example.com:5000']);
    assert.deepEqual(users('x.example.com/app'), ['*.example.com']);
    assert.deepEqual(users('a.b.example.com/app'), [], 'a wildcard covers one label');
    assert.deepEqual(users('example.com/app'), []);
    assert.deepEqual(users('docker.io/library/nginx'), ['https://index.docker.io/v1/']);
    assert.deepEqual(users('127.0.0.1:5000/test/busybox'), []);
  });
});
