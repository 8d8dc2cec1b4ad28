// emulator: the subject under test (unit tests of the emulator's own modules)
import assert from 'node:assert/strict';
import { ApiError } from '../../cluster/apiserver/errors.js';
import { parseBool, parseRequestInfo } from '../../cluster/apiserver/request-info.js';

const q = (s = ''): URLSearchParams => new URLSearchParams(s);

describe('apiserver request info', () => {
  it('parses namespaced core paths and verbs', () => {
    assert.deepEqual(parseRequestInfo('GET', '/api/v1/namespaces/ns1/pods/p1', q()), {
      kind: 'resource',
      group: '',
      version: 'v1',
      namespace: 'ns1',
      resource: 'pods',
      name: 'p1',
      subresource: '',
      verb: 'get',
    });
    const list = parseRequestInfo('GET', '/api/v1/pods', q());
    assert.equal(list.kind === 'resource' && list.verb, 'list');
    const del = parseRequestInfo('DELETE', '/api/v1/namespaces/ns1/pods', q());
    assert.equal(del.kind === 'resource' && del.verb, 'deletecollection');
  });

  it('treats /namespaces/NAME[/status] as the namespace object itself', () => {
    const ns = parseRequestInfo('PUT', '/api/v1/namespaces/ns1/status', q());
    assert.ok(ns.kind === 'resource');
    assert.equal(ns.resource, 'namespaces');
    assert.equal(ns.name, 'ns1');
    assert.equal(ns.subresource, 'status');
    const get = parseRequestInfo('GET', '/api/v1/namespaces/ns1', q());
    assert.ok(get.kind === 'resource' && get.resource === 'namespaces' && get.name === 'ns1' && get.verb === 'get');
  });

  it('parses group paths, subresources, watch=True and the /watch/ prefix', () => {
    const info = parseRequestInfo('PATCH', '/apis/apps.kruise.io/v1beta1/nodeimages/n1/status', q());
    assert.ok(info.kind === 'resource');
    assert.equal(info.group, 'apps.kruise.io');
    assert.equal(info.subresource, 'status');
    assert.equal(info.verb, 'patch');
    const w1 = parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps', q('watch=True'));
    assert.ok(w1.kind === 'resource' && w1.verb === 'watch');
    const w2 = parseRequestInfo('GET', '/api/v1/watch/namespaces/default/configmaps', q());
    assert.ok(w2.kind === 'resource' && w2.verb === 'watch' && w2.resource === 'configmaps');
  });

  it('leaves discovery paths to others', () => {
    assert.equal(parseRequestInfo('GET', '/api/v1', q()).kind, 'other');
    assert.equal(parseRequestInfo('GET', '/apis/apps/v1', q()).kind, 'other');
    assert.equal(parseRequestInfo('GET', '/version', q()).kind, 'other');
  });

  it('parses booleans like Go and rejects others', () => {
    assert.equal(parseBool('True', 'watch'), true);
    assert.equal(parseBool('1', 'watch'), true);
    assert.equal(parseBool('false', 'watch'), false);
    assert.throws(
      () => parseBool('yes', 'watch'),
      (e: unknown) => e instanceof ApiError && e.code === 400,
    );
  });
});
