// emulator: its JSON Patch code applies our webhook's response in-process, as kube-apiserver would (a unit test)
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { jsonPatch } from '../../../src/controller/admission/admission-review.js';
import { createWebhookCertificates, notAfterOf, servingMatches } from '../../../src/controller/admission/certs.js';
import { IMAGE_WEBHOOK_PATHS, imageWebhookHandlers } from '../../../src/controller/admission/images/handlers.js';
import { clientConfigFor } from '../../../src/controller/admission/configurations.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { FakeClock } from '../../../src/util/clock.js';
import { applyJsonPatch, type JsonValue } from '../../cluster/apiserver/patch/index.js';

const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));
const handlers = imageWebhookHandlers(clock);

function request(object: unknown, operation: 'CREATE' | 'UPDATE' = 'CREATE', oldObject?: unknown): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'X' },
    resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'x' },
    operation,
    object: object as KubeObject,
    oldObject: oldObject as KubeObject,
  };
}

async function call(path: string, req: AdmissionRequest) {
  const handler = handlers[path];
  assert.ok(handler, path);
  return await handler(req);
}

describe('controller webhooks: image handlers', () => {
  it('defaults an ImagePullJob', async () => {
    const d = await call(
      IMAGE_WEBHOOK_PATHS.mutateImagePullJob,
      request({ metadata: { name: 'j' }, spec: { image: 'nginx', completionPolicy: {} } }),
    );
    assert.ok(d.allowed && d.object);
    const spec = (d.object as unknown as { spec: Record<string, unknown> }).spec;
    assert.deepEqual(spec.completionPolicy, { type: 'Always' });
    assert.equal(spec.imagePullPolicy, 'IfNotPresent');
  });

  it('defaults NodeImage tags with createdAt (now) and a pull policy, sorted', async () => {
    const d = await call(
      IMAGE_WEBHOOK_PATHS.mutateNodeImage,
      request({ metadata: { name: 'n' }, spec: { images: { nginx: { tags: [{ tag: 'b' }, { tag: 'a' }] } } } }),
    );
    assert.ok(d.allowed && d.object);
    const tags = (
      d.object as unknown as { spec: { images: { nginx: { tags: { tag: string; createdAt: string }[] } } } }
    ).spec.images.nginx.tags;
    assert.deepEqual(
      tags.map((t) => t.tag),
      ['a', 'b'],
    );
    assert.equal(tags[0]?.createdAt, '2026-03-01T00:00:00Z');
  });

  it('denies an invalid job with 400 and a message naming the field', async () => {
    const d = await call(
      IMAGE_WEBHOOK_PATHS.validateImagePullJob,
      request({ metadata: { name: 'j' }, spec: { image: '', completionPolicy: {} } }),
    );
    assert.deepEqual(d, { allowed: false, code: 400, message: 'spec.image: image can not be empty' });
  });

  it('passes the stored ImageListPullJob on update, so a negative number it already had does not block it', async () => {
    const old = {
      metadata: { name: 'l' },
      spec: { images: ['nginx'], completionPolicy: {}, pullPolicy: { backoffLimit: -1 } },
    };
    const updated = { ...old, metadata: { name: 'l', finalizers: ['apps.kruise.io/deletion-protection'] } };
    assert.deepEqual(await call(IMAGE_WEBHOOK_PATHS.validateImageListPullJob, request(updated, 'UPDATE', old)), {
      allowed: true,
    });
    assert.equal((await call(IMAGE_WEBHOOK_PATHS.validateImageListPullJob, request(updated))).allowed, false);
  });

  it('denies a change of spec.pullSecrets with 403', async () => {
    const old = { metadata: { name: 'j' }, spec: { image: 'nginx', completionPolicy: {}, pullSecrets: ['a'] } };
    const d = await call(
      IMAGE_WEBHOOK_PATHS.validateImagePullJob,
      request({ ...old, spec: { ...old.spec, pullSecrets: ['b'] } }, 'UPDATE', old),
    );
    assert.equal(d.allowed, false);
    assert.ok(!d.allowed && d.code === 403 && /spec\.pullSecrets is immutable/.test(d.message));
  });

  it('admits a NodeImage tag without TTL, denies only the rule a tag breaks, and an ImageListPullJob without images', async () => {
    const tag = { tag: 'a', createdAt: '2026-03-01T00:00:00Z', pullPolicy: {} };
    const ni = (tags: unknown[]) =>
      call(
        IMAGE_WEBHOOK_PATHS.validateNodeImage,
        request({ metadata: { name: 'n' }, spec: { images: { nginx: { tags } } } }),
      );
    assert.deepEqual(await ni([tag]), { allowed: true });
    assert.deepEqual(await ni([{ ...tag, version: -2 }]), {
      allowed: false,
      code: 400,
      message: 'spec.images[nginx].tags[0].version: Invalid value: -2: version for nginx/a can not be less than 0',
    });
    const list = await call(
      IMAGE_WEBHOOK_PATHS.validateImageListPullJob,
      request({ metadata: { name: 'l' }, spec: { images: [], completionPolicy: {} } }),
    );
    assert.ok(!list.allowed && /image can not be empty/.test(list.message));
  });

  it('leaves a malformed pullPolicy as sent instead of defaulting it into an object', async () => {
    const d = await call(
      IMAGE_WEBHOOK_PATHS.mutateImagePullJob,
      request({ metadata: { name: 'j' }, spec: { image: 'nginx', completionPolicy: {}, pullPolicy: 'fast' } }),
    );
    assert.ok(d.allowed && d.object);
    assert.equal((d.object as unknown as { spec: { pullPolicy: unknown } }).spec.pullPolicy, 'fast');
  });

  it('allows deletes and malformed objects through the mutating handlers untouched', async () => {
    assert.deepEqual(
      await call(IMAGE_WEBHOOK_PATHS.validateImagePullJob, { ...request(undefined), operation: 'DELETE' }),
      { allowed: true },
    );
    assert.deepEqual(await call(IMAGE_WEBHOOK_PATHS.mutateImagePullJob, request({ metadata: {}, spec: 'nonsense' })), {
      allowed: true,
    });
  });
});

describe('controller webhooks: JSON patch of a mutation', () => {
  it('turns the sent object into the mutated one (property)', () => {
    const json = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
    const obj = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 5 });
    fc.assert(
      fc.property(obj, obj, (from, to) => {
        const ops = jsonPatch(from, to);
        const patched = applyJsonPatch(from, ops as unknown as JsonValue);
        assert.deepEqual(JSON.parse(JSON.stringify(patched)), JSON.parse(JSON.stringify(to)));
      }),
      { numRuns: 300 },
    );
  });

  it('removes and adds keys named like prototype members (found by the property test: seed -120302725)', () => {
    const from = JSON.parse('{"a":{"toString":false},"b":{}}') as JsonValue;
    const to = JSON.parse('{"a":{},"b":{"constructor":1}}') as JsonValue;
    assert.deepEqual(jsonPatch(from, to), [
      { op: 'remove', path: '/a/toString' },
      { op: 'add', path: '/b/constructor', value: 1 },
    ]);
  });

  it('escapes ~ and / in keys', () => {
    assert.deepEqual(jsonPatch({ a: {} }, { a: { 'x/y~z': 1 } }), [{ op: 'add', path: '/a/x~1y~0z', value: 1 }]);
  });
});

describe('controller webhooks: certificates', function () {
  this.timeout(20_000);
  it('creates a CA and a serving certificate for the hosts, chained to the CA', () => {
    const certs = createWebhookCertificates({
      hosts: ['svc.ns.svc', '127.0.0.1'],
      now: clock.now(),
      servingValidityMs: 86_400_000,
    });
    assert.ok(servingMatches(certs, ['svc.ns.svc', '127.0.0.1']));
    assert.ok(!servingMatches(certs, ['other.ns.svc']));
    assert.equal(notAfterOf(certs.serving.certPem), clock.now() + 86_400_000);
    assert.ok(new X509Certificate(certs.ca.certPem).ca);
    assert.ok(!new X509Certificate(certs.serving.certPem).ca);
    const other = createWebhookCertificates({ hosts: ['svc.ns.svc'], now: clock.now() });
    assert.ok(!servingMatches({ ca: other.ca, serving: certs.serving }, ['svc.ns.svc']));
  });

  it('points webhooks at the Service or at a URL, with the CA as caBundle', () => {
    const target = { service: { namespace: 'kruise-system', name: 'kc', port: 443 }, caBundlePem: 'PEM' };
    assert.deepEqual(clientConfigFor('/p', target), {
      service: { namespace: 'kruise-system', name: 'kc', port: 443, path: '/p' },
      caBundle: 'UEVN',
    });
    assert.deepEqual(clientConfigFor('/p', { ...target, urlBase: 'https://127.0.0.1:9/' }), {
      url: 'https://127.0.0.1:9/p',
      caBundle: 'UEVN',
    });
  });
});
