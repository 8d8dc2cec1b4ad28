// emulator: the subject under test (unit tests of the emulator's PATCH semantics, test/cluster/apiserver/patch)
import assert from 'node:assert/strict';
import {
  APPLY_PATCH,
  JSON_PATCH,
  MERGE_PATCH,
  PatchError,
  STRATEGIC_MERGE_PATCH,
  acceptedPatchTypes,
  applyPatch,
  mediaTypeOf,
} from '../../cluster/apiserver/patch/index.js';
import { deepFreeze } from './support.js';

const CONFIGMAP = { group: '', version: 'v1', kind: 'ConfigMap' };
const POD = { group: '', version: 'v1', kind: 'Pod' };
const NODEIMAGE = { group: 'apps.kruise.io', version: 'v1beta1', kind: 'NodeImage' };
const CR = { isCustomResource: true };

const CR_415 =
  'the body of the request was in an unknown format - accepted media types include: ' +
  'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';
const BUILTIN_415 =
  'the body of the request was in an unknown format - accepted media types include: ' +
  'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml';

function rejects(fn: () => unknown, code: number, message: string | RegExp, reason?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof PatchError, `expected a PatchError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    if (reason) assert.equal(err.reason, reason);
    return true;
  });
}

const cm = deepFreeze({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm1', namespace: 'default', resourceVersion: '4', labels: { app: 'demo' } },
  data: { key1: 'value1' },
});

const nodeImage = deepFreeze({
  apiVersion: 'apps.kruise.io/v1beta1',
  kind: 'NodeImage',
  metadata: { name: 'n1', resourceVersion: '9' },
  spec: { images: { nginx: { tags: [{ tag: '1.24' }] } } },
  status: { desired: 1, succeeded: 0 },
});

describe('applyPatch', () => {
  describe('content types', () => {
    it('reads the media type without parameters and case', () => {
      assert.equal(mediaTypeOf('Application/Merge-Patch+JSON; charset=utf-8'), MERGE_PATCH);
      const result = applyPatch(cm, '{"data":{"k":"v"}}', 'application/merge-patch+json; charset=utf-8', CONFIGMAP);
      assert.deepEqual(result.data, { key1: 'value1', k: 'v' });
    });

    it('lists the accepted types like kube-apiserver', () => {
      assert.deepEqual(acceptedPatchTypes(POD), [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH]);
      assert.deepEqual(acceptedPatchTypes(NODEIMAGE), [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]);
      assert.deepEqual(acceptedPatchTypes(POD, CR), [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]);
      assert.deepEqual(acceptedPatchTypes(NODEIMAGE, { isCustomResource: false }), [
        JSON_PATCH,
        MERGE_PATCH,
        STRATEGIC_MERGE_PATCH,
        APPLY_PATCH,
      ]);
    });

    it('answers 415 for strategic merge patch on a custom resource (kubectl patch default type)', () => {
      rejects(
        () => applyPatch(nodeImage, '{"spec":{}}', STRATEGIC_MERGE_PATCH, NODEIMAGE, CR),
        415,
        CR_415,
        'UnsupportedMediaType',
      );
      rejects(() => applyPatch(nodeImage, '{"spec":{}}', STRATEGIC_MERGE_PATCH, NODEIMAGE), 415, CR_415);
    });

    it('answers 415 for a content type that is no patch type', () => {
      rejects(() => applyPatch(cm, '{}', 'application/json', CONFIGMAP), 415, BUILTIN_415);
      rejects(() => applyPatch(cm, '{}', '', CONFIGMAP), 415, BUILTIN_415);
    });
  });

  describe('what the clients send', () => {
    it('kubectl apply, second time, changed ConfigMap: strategic merge patch', () => {
      const body = Buffer.from(
        '{"data":{"key1":"value2"},"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\\n"},"labels":{"app":"demo2"}}}',
      );
      const result = applyPatch(cm, body, STRATEGIC_MERGE_PATCH, CONFIGMAP);
      assert.deepEqual(result, {
        ...cm,
        metadata: {
          ...cm.metadata,
          labels: { app: 'demo2' },
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' },
        },
        data: { key1: 'value2' },
      });
    });

    it('kubectl apply on a Pod: $setElementOrder and $patch: delete', () => {
      const live = deepFreeze({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {
          containers: [
            { name: 'a', image: 'nginx:1' },
            { name: 'b', image: 'busybox' },
          ],
        },
      });
      const body =
        '{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"image":"nginx:2","name":"a"},{"$patch":"delete","name":"b"}]}}';
      assert.deepEqual(applyPatch(live, body, STRATEGIC_MERGE_PATCH, POD).spec, {
        containers: [{ name: 'a', image: 'nginx:2' }],
      });
    });

    it('kubectl apply on a CRD object and kubectl patch --type merge (also on /status): merge patch', () => {
      const body = '{"metadata":{"annotations":{"x":"y"}},"spec":{"images":{"nginx":{"tags":[{"tag":"1.25"}]}}}}';
      const result = applyPatch(nodeImage, body, MERGE_PATCH, NODEIMAGE, CR);
      assert.deepEqual(result.spec, { images: { nginx: { tags: [{ tag: '1.25' }] } } });
      assert.deepEqual(result.metadata, { name: 'n1', resourceVersion: '9', annotations: { x: 'y' } });
      const status = applyPatch(nodeImage, '{"status":{"succeeded":1}}', MERGE_PATCH, NODEIMAGE, CR);
      assert.deepEqual(status.status, { desired: 1, succeeded: 1 });
    });

    it('kubectl patch --type json', () => {
      const body = '[{"op":"replace","path":"/spec/images/nginx/tags/0/tag","value":"1.26"}]';
      const result = applyPatch(nodeImage, body, JSON_PATCH, NODEIMAGE, CR);
      assert.deepEqual(result.spec, { images: { nginx: { tags: [{ tag: '1.26' }] } } });
    });

    it('python3-kubernetes: a dict is a strategic merge patch, a list a JSON patch', () => {
      assert.deepEqual(applyPatch(cm, '{"data": {"key2": "v2"}}', STRATEGIC_MERGE_PATCH, CONFIGMAP).data, {
        key1: 'value1',
        key2: 'v2',
      });
      const jsonPatch = '[{"op": "add", "path": "/data/key3", "value": "v3"}]';
      assert.deepEqual(applyPatch(cm, jsonPatch, JSON_PATCH, CONFIGMAP).data, { key1: 'value1', key3: 'v3' });
    });
  });

  describe('server-side apply (minimal: an overlay, no field ownership)', () => {
    it('takes the JSON manifest kubectl apply --server-side sends', () => {
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm1', namespace: 'default', labels: { tier: 'web' } },
        data: { key2: 'v2' },
      });
      const result = applyPatch(cm, body, APPLY_PATCH, CONFIGMAP);
      assert.deepEqual(result, {
        ...cm,
        metadata: { ...cm.metadata, labels: { app: 'demo', tier: 'web' } },
        data: { key1: 'value1', key2: 'v2' },
      });
    });

    it('takes YAML, and creates from {} (the caller creates absent objects)', () => {
      const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cmssa\n  namespace: default\ndata:\n  a: "1"\n';
      assert.deepEqual(applyPatch({}, yaml, APPLY_PATCH, CONFIGMAP), {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cmssa', namespace: 'default' },
        data: { a: '1' },
      });
    });

    it('merges lists with a merge key on built-in kinds, replaces lists on custom resources, ignores nulls', () => {
      const live = deepFreeze({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {
          containers: [
            { name: 'a', image: '1' },
            { name: 'b', image: '1' },
          ],
        },
      });
      const applied = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', labels: null },
        spec: { containers: [{ name: 'a', image: '2' }] },
      };
      assert.deepEqual(applyPatch(live, JSON.stringify(applied), APPLY_PATCH, POD).spec, {
        containers: [
          { name: 'a', image: '2' },
          { name: 'b', image: '1' },
        ],
      });
      const crApplied = {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'NodeImage',
        metadata: { name: 'n1' },
        spec: { images: { nginx: { tags: [{ tag: '2' }] } } },
        status: null,
      };
      const result = applyPatch(nodeImage, JSON.stringify(crApplied), APPLY_PATCH, NODEIMAGE, CR);
      assert.deepEqual(result.spec, { images: { nginx: { tags: [{ tag: '2' }] } } });
      assert.deepEqual(result.status, nodeImage.status);
    });

    it('rejects an apply patch for another version or kind, or without them', () => {
      const apply = (doc: object) => () => applyPatch(cm, JSON.stringify(doc), APPLY_PATCH, CONFIGMAP);
      rejects(
        apply({ apiVersion: 'v2', kind: 'ConfigMap' }),
        400,
        'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
      );
      rejects(
        apply({ apiVersion: 'v1', kind: 'Secret' }),
        400,
        'Incorrect kind specified in apply patch. Specified patch kind: Secret, expected: ConfigMap',
      );
      rejects(apply({ kind: 'ConfigMap' }), 400, /Object 'apiVersion' is missing/);
      rejects(apply({ apiVersion: 'v1' }), 400, /Object 'Kind' is missing/);
      rejects(apply({ apiVersion: 'v1', kind: 'ConfigMap', data: { $patch: 'replace' } }), 400, /directive "\$patch"/);
    });

    it('rejects YAML that is broken, holds several documents or keys JSON objects cannot hold', () => {
      rejects(() => applyPatch(cm, 'a: [1, 2', APPLY_PATCH, CONFIGMAP), 400, /^error decoding YAML: /);
      rejects(() => applyPatch(cm, 'a: 1\n---\nb: 2\n', APPLY_PATCH, CONFIGMAP), 400, /^error decoding YAML: /);
      rejects(() => applyPatch(cm, '- a\n- b\n', APPLY_PATCH, CONFIGMAP), 400, /must be an object/);
      rejects(() => applyPatch(cm, 'x: .inf\n', APPLY_PATCH, CONFIGMAP), 400, /^error decoding YAML: /);
      // A YAML key __proto__ becomes an own member; the prototype of the result (and of every object) is untouched.
      const proto = 'apiVersion: v1\nkind: ConfigMap\n__proto__:\n  polluted: true\n';
      const result = applyPatch(cm, proto, APPLY_PATCH, CONFIGMAP);
      assert.equal(Object.getPrototypeOf(result), Object.prototype);
      assert.deepEqual(Object.getOwnPropertyDescriptor(result, '__proto__')?.value, { polluted: true });
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    });
  });

  describe('bad bodies', () => {
    it('rejects an empty body with 400', () => {
      rejects(() => applyPatch(cm, '', MERGE_PATCH, CONFIGMAP), 400, 'the patch body is empty', 'BadRequest');
      rejects(() => applyPatch(cm, Buffer.alloc(0), JSON_PATCH, CONFIGMAP), 400, 'the patch body is empty');
    });

    it('rejects JSON that does not parse with 400', () => {
      for (const type of [MERGE_PATCH, JSON_PATCH, STRATEGIC_MERGE_PATCH]) {
        rejects(() => applyPatch(cm, '{"data":', type, CONFIGMAP), 400, /^the patch body is not valid JSON: /);
      }
      rejects(() => applyPatch(cm, '{"a":1e999}', MERGE_PATCH, CONFIGMAP), 400, /too large/);
    });

    it('accepts a UTF-8 byte order mark', () => {
      assert.deepEqual(applyPatch(cm, '\uFEFF{"data":null}', MERGE_PATCH, CONFIGMAP).data, undefined);
    });

    it('rejects merge and strategic patches that are no objects with 400', () => {
      rejects(() => applyPatch(cm, '[1]', MERGE_PATCH, CONFIGMAP), 400, /a merge patch must be a JSON object/);
      rejects(() => applyPatch(cm, 'null', MERGE_PATCH, CONFIGMAP), 400, /a merge patch must be a JSON object/);
      rejects(
        () => applyPatch(cm, '"x"', STRATEGIC_MERGE_PATCH, CONFIGMAP),
        400,
        /a strategic merge patch must be a JSON object/,
      );
    });

    it('rejects a JSON patch that turns the object into something else with 422', () => {
      rejects(
        () => applyPatch(cm, '[{"op":"replace","path":"","value":[1]}]', JSON_PATCH, CONFIGMAP),
        422,
        /must be a JSON object/,
        'Invalid',
      );
    });

    it('passes the failure of a JSON patch test through as 422', () => {
      rejects(
        () => applyPatch(cm, '[{"op":"test","path":"/metadata/resourceVersion","value":"3"}]', JSON_PATCH, CONFIGMAP),
        422,
        'testing value /metadata/resourceVersion failed: test failed',
      );
    });

    it('refuses a target that is not JSON data (a programming error, not a client error)', () => {
      assert.throws(() => applyPatch({ when: new Date() }, '{}', MERGE_PATCH, CONFIGMAP), TypeError);
    });
  });

  it('keeps patch values out of error messages (a patch may carry secret data)', () => {
    const secret = deepFreeze({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'YQ==' } });
    const SECRET = { group: '', version: 'v1', kind: 'Secret' };
    const bodies: [string, string][] = [
      ['{"data":{"$patch":"squash","password":"hunter2"}}', STRATEGIC_MERGE_PATCH],
      ['{"data":{"password":"hunter2"}}', JSON_PATCH],
      ['["hunter2"]', MERGE_PATCH],
      ['[{"op":"add","path":{"password":"hunter2"},"value":1}]', JSON_PATCH],
      ['{"spec":{"containers":[{"env":[{"name":"P","value":"hunter2"}]}]}}', STRATEGIC_MERGE_PATCH],
    ];
    for (const [body, type] of bodies) {
      const target = type === STRATEGIC_MERGE_PATCH && body.includes('containers') ? { kind: 'Pod' } : secret;
      const gvk = target === secret ? SECRET : POD;
      assert.throws(
        () => applyPatch(target, body, type, gvk),
        (err: unknown) => err instanceof PatchError && !err.message.includes('hunter2'),
        body,
      );
    }
  });

  it('never modifies the live object and shares nothing with it', () => {
    const result = applyPatch(cm, '{"data":{"k":"v"}}', STRATEGIC_MERGE_PATCH, CONFIGMAP) as any;
    result.metadata.labels.app = 'changed'; // would throw on the frozen live object if shared
    assert.equal(cm.metadata.labels.app, 'demo');
  });
});
