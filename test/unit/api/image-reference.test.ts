import assert from 'node:assert/strict';
import {
  familiarName,
  isDigest,
  joinNameAndTag,
  nameAndTag,
  normalizedReference,
  parseImageReference,
  pullReference,
  registryOf,
  repositoryName,
  tryParseImageReference,
  tryParseNameAndTag,
  validateImageReference,
  InvalidImageReferenceError,
} from '../../../src/api/image-reference.js';

const SHA256 = 'sha256:9ae97d36d26566ff84e8893c64a6dc4fe8ca6d1144bf5b87b2b85a32def253c7';
const SHA512 = `sha512:${'0123456789abcdef'.repeat(8)}`;

interface Row {
  input: string;
  registry: string;
  path: string;
  /** NodeImage key and tag (OpenKruise's NormalizeImageRefToNameTag). */
  name: string;
  tag: string;
  pull: string;
  normalized: string;
}

const valid: Row[] = [
  {
    input: 'nginx',
    registry: 'docker.io',
    path: 'library/nginx',
    name: 'nginx',
    tag: 'latest',
    pull: 'docker.io/library/nginx:latest',
    normalized: 'docker.io/library/nginx:latest',
  },
  {
    input: 'docker.io/library/nginx:1.9',
    registry: 'docker.io',
    path: 'library/nginx',
    name: 'nginx',
    tag: '1.9',
    pull: 'docker.io/library/nginx:1.9',
    normalized: 'docker.io/library/nginx:1.9',
  },
  {
    input: 'index.docker.io/library/busybox:1.36.1',
    registry: 'docker.io',
    path: 'library/busybox',
    name: 'busybox',
    tag: '1.36.1',
    pull: 'docker.io/library/busybox:1.36.1',
    normalized: 'docker.io/library/busybox:1.36.1',
  },
  {
    input: 'docker.io/foo/bar:1',
    registry: 'docker.io',
    path: 'foo/bar',
    name: 'foo/bar',
    tag: '1',
    pull: 'docker.io/foo/bar:1',
    normalized: 'docker.io/foo/bar:1',
  },
  {
    input: 'openkruise/kruise-manager:v1.8.0',
    registry: 'docker.io',
    path: 'openkruise/kruise-manager',
    name: 'openkruise/kruise-manager',
    tag: 'v1.8.0',
    pull: 'docker.io/openkruise/kruise-manager:v1.8.0',
    normalized: 'docker.io/openkruise/kruise-manager:v1.8.0',
  },
  {
    input: 'registry.k8s.io/e2e-test-images/nginx:1.14-4',
    registry: 'registry.k8s.io',
    path: 'e2e-test-images/nginx',
    name: 'registry.k8s.io/e2e-test-images/nginx',
    tag: '1.14-4',
    pull: 'registry.k8s.io/e2e-test-images/nginx:1.14-4',
    normalized: 'registry.k8s.io/e2e-test-images/nginx:1.14-4',
  },
  {
    input: 'registry.k8s.io/pause:3.10',
    registry: 'registry.k8s.io',
    path: 'pause',
    name: 'registry.k8s.io/pause',
    tag: '3.10',
    pull: 'registry.k8s.io/pause:3.10',
    normalized: 'registry.k8s.io/pause:3.10',
  },
  {
    input: 'localhost:5000/foo:t',
    registry: 'localhost:5000',
    path: 'foo',
    name: 'localhost:5000/foo',
    tag: 't',
    pull: 'localhost:5000/foo:t',
    normalized: 'localhost:5000/foo:t',
  },
  {
    input: 'localhost/app',
    registry: 'localhost',
    path: 'app',
    name: 'localhost/app',
    tag: 'latest',
    pull: 'localhost/app:latest',
    normalized: 'localhost/app:latest',
  },
  {
    input: '127.0.0.1:5001/test/busybox:2.0',
    registry: '127.0.0.1:5001',
    path: 'test/busybox',
    name: '127.0.0.1:5001/test/busybox',
    tag: '2.0',
    pull: '127.0.0.1:5001/test/busybox:2.0',
    normalized: '127.0.0.1:5001/test/busybox:2.0',
  },
  {
    input: '[::1]:5000/foo/bar:baz',
    registry: '[::1]:5000',
    path: 'foo/bar',
    name: '[::1]:5000/foo/bar',
    tag: 'baz',
    pull: '[::1]:5000/foo/bar:baz',
    normalized: '[::1]:5000/foo/bar:baz',
  },
  {
    input: 'ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib:0.100.0',
    registry: 'ghcr.io',
    path: 'open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib',
    name: 'ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib',
    tag: '0.100.0',
    pull: 'ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib:0.100.0',
    normalized: 'ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib:0.100.0',
  },
  {
    input: 'my-registry.example.com:8443/team/app_name__x.y:v1.0.0-rc.1_B',
    registry: 'my-registry.example.com:8443',
    path: 'team/app_name__x.y',
    name: 'my-registry.example.com:8443/team/app_name__x.y',
    tag: 'v1.0.0-rc.1_B',
    pull: 'my-registry.example.com:8443/team/app_name__x.y:v1.0.0-rc.1_B',
    normalized: 'my-registry.example.com:8443/team/app_name__x.y:v1.0.0-rc.1_B',
  },
  {
    // An upper-case first component can only be a registry host (paths are lower-case).
    input: 'Registry/app:1',
    registry: 'Registry',
    path: 'app',
    name: 'Registry/app',
    tag: '1',
    pull: 'Registry/app:1',
    normalized: 'Registry/app:1',
  },
  {
    input: `nginx@${SHA256}`,
    registry: 'docker.io',
    path: 'library/nginx',
    name: 'nginx',
    tag: SHA256,
    pull: `docker.io/library/nginx@${SHA256}`,
    normalized: `docker.io/library/nginx@${SHA256}`,
  },
  {
    // name:tag@digest: the digest wins for pulling and for the NodeImage tag; the normalized form keeps both.
    input: `nginx:1.25@${SHA256}`,
    registry: 'docker.io',
    path: 'library/nginx',
    name: 'nginx',
    tag: SHA256,
    pull: `docker.io/library/nginx@${SHA256}`,
    normalized: `docker.io/library/nginx:1.25@${SHA256}`,
  },
  {
    input: `quay.io/prometheus/node-exporter@${SHA512}`,
    registry: 'quay.io',
    path: 'prometheus/node-exporter',
    name: 'quay.io/prometheus/node-exporter',
    tag: SHA512,
    pull: `quay.io/prometheus/node-exporter@${SHA512}`,
    normalized: `quay.io/prometheus/node-exporter@${SHA512}`,
  },
  {
    input: `localhost:5000/foo:bar@sha384:${'ab'.repeat(48)}`,
    registry: 'localhost:5000',
    path: 'foo',
    name: 'localhost:5000/foo',
    tag: `sha384:${'ab'.repeat(48)}`,
    pull: `localhost:5000/foo@sha384:${'ab'.repeat(48)}`,
    normalized: `localhost:5000/foo:bar@sha384:${'ab'.repeat(48)}`,
  },
];

const invalid: [input: unknown, problem: RegExp][] = [
  ['', /must not be empty/],
  [42, /must be a string, got number/],
  [null, /must be a string, got null/],
  ['Nginx', /repository name "library\/Nginx" must be lowercase/],
  ['docker.io/Library/nginx', /must be lowercase/],
  ['nginx:', /invalid tag ""/],
  ['nginx:-bad', /invalid tag "-bad"/],
  [`nginx:${'a'.repeat(129)}`, /invalid tag/],
  ['nginx bad', /must not contain whitespace/],
  ['foo//bar', /invalid repository path "foo\/\/bar"/],
  ['-foo', /invalid repository path "library\/-foo"/],
  ['foo/bar_', /invalid repository path/],
  ['localhost:abc/foo', /invalid registry "localhost:abc"/],
  ['my_registry.com/foo', /invalid registry "my_registry.com"/],
  [':tag', /repository name must not be empty/],
  ['nginx@sha256:abc', /sha256 needs 64 hex digits, got 3/],
  [`nginx@sha256:${'A'.repeat(64)}`, /must be lowercase hexadecimal/],
  [`nginx@md5:${'a'.repeat(32)}`, /unsupported digest algorithm "md5" \(supported: sha256, sha384, sha512\)/],
  ['nginx@', /invalid digest ""/],
  [`nginx@${SHA256}@${SHA256}`, /invalid digest/],
  ['9ae97d36d26566ff84e8893c64a6dc4fe8ca6d1144bf5b87b2b85a32def253c7', /is an image ID, not a name/],
  [`example.com/${'a'.repeat(250)}`, /must not be more than 255 characters/],
];

describe('image references', () => {
  for (const row of valid) {
    it(`parses ${row.input}`, () => {
      const ref = parseImageReference(row.input);
      assert.equal(ref.registry, row.registry);
      assert.equal(ref.path, row.path);
      assert.equal(repositoryName(ref), `${row.registry}/${row.path}`);
      assert.deepEqual(nameAndTag(ref), { name: row.name, tag: row.tag });
      assert.equal(familiarName(ref), row.name);
      assert.equal(pullReference(ref), row.pull);
      assert.equal(normalizedReference(ref), row.normalized);
      assert.equal(validateImageReference(row.input), undefined);
      // Normalizing is idempotent: the normalized form parses to the same reference.
      const again = parseImageReference(row.normalized);
      assert.equal(normalizedReference(again), row.normalized);
      assert.equal(pullReference(again), row.pull);
      assert.deepEqual(nameAndTag(again), { name: row.name, tag: row.tag });
    });
  }

  for (const [input, problem] of invalid) {
    it(`rejects ${JSON.stringify(input)?.slice(0, 60)}`, () => {
      const result = tryParseImageReference(input);
      assert.equal(result.ok, false);
      assert.match(validateImageReference(input) ?? '', problem);
      if (typeof input === 'string') assert.throws(() => parseImageReference(input), InvalidImageReferenceError);
    });
  }

  it('joins a NodeImage name and tag back into the reference to pull, digests with @', () => {
    assert.equal(joinNameAndTag('nginx', '1.25'), 'nginx:1.25');
    assert.equal(joinNameAndTag('nginx', SHA256), `nginx@${SHA256}`);
    assert.equal(isDigest(SHA256), true);
    assert.equal(isDigest('latest'), false);
    const fromKey = tryParseNameAndTag('registry.k8s.io/pause', SHA256);
    assert.ok(fromKey.ok);
    assert.equal(pullReference(fromKey.reference), `registry.k8s.io/pause@${SHA256}`);
    const plain = tryParseNameAndTag('nginx', 'alpine');
    assert.ok(plain.ok);
    assert.equal(pullReference(plain.reference), 'docker.io/library/nginx:alpine');
  });

  it('refuses NodeImage names that already carry a tag or digest, and empty parts', () => {
    assert.match(errorOf(tryParseNameAndTag('nginx:1', '2')), /must not carry a tag or digest/);
    assert.match(errorOf(tryParseNameAndTag(`nginx@${SHA256}`, '2')), /must not carry a tag or digest/);
    assert.match(errorOf(tryParseNameAndTag('', 'latest')), /image name must not be empty/);
    assert.match(errorOf(tryParseNameAndTag('nginx', '')), /tag for image "nginx" must not be empty/);
    assert.match(errorOf(tryParseNameAndTag('nginx', 'sha256:abc')), /64 hex digits/);
    // A registry port is not a tag.
    assert.ok(tryParseNameAndTag('localhost:5000/foo', 'bar').ok);
  });
});

function errorOf(result: ReturnType<typeof tryParseNameAndTag>): string {
  return result.ok ? '' : result.error;
}

describe('registryOf', () => {
  it('finds the registry the way runtimes do, and the text before "/" for an unparseable reference', () => {
    assert.equal(registryOf('busybox'), 'docker.io');
    assert.equal(registryOf('library/busybox:1.36'), 'docker.io');
    assert.equal(registryOf('127.0.0.1:5001/test/busybox:1.0'), '127.0.0.1:5001');
    assert.equal(registryOf('localhost/app'), 'localhost');
    assert.equal(registryOf('registry.example.com/team/app@sha256:' + 'a'.repeat(64)), 'registry.example.com');
    assert.equal(registryOf('[::1]:5000/app:1'), '[::1]:5000');
    assert.equal(registryOf('Bad.Host:x/Path'), 'Bad.Host:x');
    assert.equal(registryOf('Busybox'), 'docker.io');
  });
});
