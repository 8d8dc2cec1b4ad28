import assert from 'node:assert/strict';
import {
  currentEnvHash,
  deepHashJson,
  envHash,
  expectedEnvHash,
  goJson,
  kubeletContainerHash,
} from '../../../src/api/runtime-container-meta.js';

describe('runtime container meta hashes (OpenKruise / kubelet vectors)', () => {
  it('kubelet HashContainer {"image","name"} gives 0x8e45cbd0 for test_container foo/image:v1', () => {
    assert.equal(kubeletContainerHash({ name: 'test_container', image: 'foo/image:v1' }), 0x8e45cbd0);
  });

  it('old kubelet hashContainer over the full container JSON gives 0x3c42280f', () => {
    const json =
      '{"name":"test_container","image":"foo/image:v1","args":["/bin/sh","-c","echo abc"],' +
      '"ports":[{"containerPort":8001}],"resources":{}}';
    assert.equal(deepHashJson(json), 0x3c42280f);
  });

  it('env hash vectors: null, foo, bar', () => {
    assert.equal(envHash([]), 86995377);
    assert.equal(envHash([{ name: 'TEST_ENV', value: 'foo' }]), 27323935);
    assert.equal(envHash([{ name: 'TEST_ENV', value: 'bar' }]), 3944769931);
  });

  it('expected and current hashes agree when the container sees the annotation value', () => {
    const container = {
      name: 'app',
      env: [
        { name: 'TEST_ENV', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['test-env']" } } },
        { name: 'PLAIN', value: 'x' },
        { name: 'SIDECARSET_VERSION', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['v']" } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      ],
    };
    const expected = expectedEnvHash(container, { annotations: { 'test-env': 'foo' } });
    assert.equal(expected, 27323935);
    assert.equal(currentEnvHash(container, 'PATH=/bin\nTEST_ENV=foo\nPLAIN=x\n'), expected);
    assert.equal(currentEnvHash(container, 'TEST_ENV=bar'), 3944769931);
    assert.equal(currentEnvHash(container, 'A=b=c\nTEST_ENV=a=b c'), envHash([{ name: 'TEST_ENV', value: 'a=b c' }]));
  });

  it('labels feed the hash too; missing values count as empty', () => {
    const container = {
      name: 'app',
      env: [{ name: 'ZONE', valueFrom: { fieldRef: { fieldPath: "metadata.labels['zone']" } } }],
    };
    assert.equal(expectedEnvHash(container, {}), envHash([{ name: 'ZONE', value: '' }]));
    assert.notEqual(expectedEnvHash(container, { labels: { zone: 'a' } }), expectedEnvHash(container, {}));
  });

  it('Go JSON escapes HTML characters', () => {
    assert.equal(goJson({ v: '<a&b>' }), '{"v":"\\u003ca\\u0026b\\u003e"}');
  });
});
