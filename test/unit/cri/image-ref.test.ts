import assert from 'node:assert/strict';
import { imageReferenceProblem, parseImageReference, registryOf } from '../../../src/cri/image-ref.js';

describe('cri image references', () => {
  it('finds the registry the way runtimes do', () => {
    assert.equal(registryOf('busybox'), 'docker.io');
    assert.equal(registryOf('library/busybox:1.36'), 'docker.io');
    assert.equal(registryOf('127.0.0.1:5001/test/busybox:1.0'), '127.0.0.1:5001');
    assert.equal(registryOf('localhost/app'), 'localhost');
    assert.equal(registryOf('registry.example.com/team/app@sha256:' + 'a'.repeat(64)), 'registry.example.com');
    assert.equal(registryOf('[::1]:5000/app:1'), '[::1]:5000');
  });

  it('parses name, tag and digest', () => {
    assert.deepEqual(parseImageReference('127.0.0.1:5000/test/busybox:2.0'), {
      registry: '127.0.0.1:5000',
      repository: 'test/busybox',
      tag: '2.0',
    });
    const digest = 'sha256:' + '0123456789abcdef'.repeat(4);
    assert.deepEqual(parseImageReference(`nginx:1.25@${digest}`), {
      registry: 'docker.io',
      repository: 'nginx',
      tag: '1.25',
      digest,
    });
  });

  it('rejects what is not a reference, with a reason', () => {
    for (const bad of ['', ' ', 'Busybox', 'a b', 'x:', 'x@sha256:12', 'http://r.io/x', 'r.io/x:' + 't'.repeat(129)]) {
      assert.equal(parseImageReference(bad), undefined, bad);
      assert.ok(imageReferenceProblem(bad), bad);
    }
    assert.match(imageReferenceProblem(' busybox') ?? '', /surrounding spaces/);
    assert.equal(imageReferenceProblem('busybox'), undefined);
  });
});
