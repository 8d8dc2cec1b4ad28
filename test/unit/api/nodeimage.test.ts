import assert from 'node:assert/strict';
import { defaultNodeImage } from '../../../src/api/defaults.js';
import { formatFieldErrors, type FieldError } from '../../../src/api/field-errors.js';
import type { NodeImage } from '../../../src/api/nodeimage.js';
import { validateNodeImage } from '../../../src/api/nodeimage-validation.js';

const NOW = '2024-05-01T10:00:00Z';

function nodeImage(images: unknown): unknown {
  return { apiVersion: 'apps.kruise.io/v1beta1', kind: 'NodeImage', metadata: { name: 'node-1' }, spec: { images } };
}

/** A tag as the webhook leaves it: defaulted and with the required TTL. */
function tag(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    tag: name,
    createdAt: NOW,
    pullPolicy: { ttlSecondsAfterFinished: 300, timeoutSeconds: 600, backoffLimit: 3 },
    ...extra,
  };
}

function only(errors: FieldError[]): FieldError {
  assert.equal(errors.length, 1, JSON.stringify(errors));
  return errors[0]!;
}

describe('NodeImage defaulting', () => {
  it('sets createdAt and pull policy defaults on every tag and sorts tags, without touching the input', () => {
    const input: NodeImage = {
      metadata: { name: 'node-1' },
      spec: {
        images: {
          nginx: {
            tags: [
              { tag: 'latest', pullPolicy: { ttlSecondsAfterFinished: 60, backoffLimit: 0 } },
              { tag: '1.25', createdAt: '2020-01-01T00:00:00Z' },
            ],
          },
        },
      },
      status: {
        desired: 2,
        imageStatuses: {
          nginx: {
            tags: [
              { tag: 'b', phase: 'Pulling' },
              { tag: 'a', phase: 'Waiting' },
            ],
          },
        },
      },
    };
    const before = structuredClone(input);
    const out = defaultNodeImage(input, NOW);
    assert.deepEqual(input, before);
    assert.deepEqual(out.spec?.images?.['nginx']?.tags, [
      { tag: '1.25', createdAt: '2020-01-01T00:00:00Z', pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 } },
      {
        tag: 'latest',
        createdAt: NOW,
        pullPolicy: { ttlSecondsAfterFinished: 60, timeoutSeconds: 600, backoffLimit: 0 },
      },
    ]);
    assert.deepEqual(
      out.status?.imageStatuses?.['nginx']?.tags.map((t) => t.tag),
      ['a', 'b'],
    );
  });
});

describe('NodeImage validation', () => {
  it('accepts a defaulted NodeImage, OpenKruise documented fields included', () => {
    const ok = nodeImage({
      ubuntu: { tags: [tag('latest', { activeDeadlineSeconds: 1200, version: 2, imagePullPolicy: 'Always' })] },
      'registry.k8s.io/pause': {
        pullSecrets: [{ namespace: 'kruise-daemon-config', name: 'secret-1', mode: 'batch' }],
        sandboxConfig: { labels: { a: 'b' }, annotations: { c: 'd' } },
        tags: [tag('3.10'), tag('sha256:9ae97d36d26566ff84e8893c64a6dc4fe8ca6d1144bf5b87b2b85a32def253c7')],
      },
    });
    assert.deepEqual(validateNodeImage(ok), []);
    assert.deepEqual(validateNodeImage({ metadata: { name: 'n' }, spec: {} }), []);
  });

  it('rejects more than 256 images', () => {
    const images: Record<string, unknown> = {};
    for (let i = 0; i < 257; i++) images[`img${i}`] = { tags: [tag('1')] };
    const error = only(validateNodeImage(nodeImage(images)));
    assert.deepEqual(error, {
      field: 'spec.images',
      type: 'FieldValueTooMany',
      message: 'spec images length 257 can not be more than 256',
    });
  });

  it("reports each of OpenKruise's tag rules with its message and the field", () => {
    const cases: [tags: unknown[], field: string, type: string, message: string][] = [
      [[tag('')], 'spec.images[nginx].tags[0].tag', 'FieldValueRequired', 'tag for image nginx can not be empty'],
      [
        [tag('1'), tag('1')],
        'spec.images[nginx].tags[1].tag',
        'FieldValueDuplicate',
        'duplicated tag 1 for image nginx',
      ],
      [
        [{ tag: '1', pullPolicy: { ttlSecondsAfterFinished: 1 } }],
        'spec.images[nginx].tags[0].createdAt',
        'FieldValueRequired',
        'createAt field for nginx/1 can not be empty',
      ],
      [
        [tag('1', { version: -1 })],
        'spec.images[nginx].tags[0].version',
        'FieldValueInvalid',
        'version for nginx/1 can not be less than 0',
      ],
      [
        [{ tag: '1', createdAt: NOW }],
        'spec.images[nginx].tags[0].pullPolicy',
        'FieldValueRequired',
        'pullPolicy field for nginx/1 must set',
      ],
    ];
    for (const [tags, field, type, message] of cases) {
      const error = only(validateNodeImage(nodeImage({ nginx: { tags } })));
      assert.deepEqual({ field: error.field, type: error.type, message: error.message }, { field, type, message });
    }
  });

  it('admits a tag without pullPolicy.ttlSecondsAfterFinished (OpenKruise denies it), so no denial carries that rule', () => {
    const noTtl = { tag: '1', createdAt: NOW, pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 } };
    assert.deepEqual(validateNodeImage(nodeImage({ nginx: { tags: [noTtl] } })), []);
    assert.equal(
      formatFieldErrors(validateNodeImage(nodeImage({ nginx: { tags: [{ ...noTtl, version: -1 }] } }))),
      'spec.images[nginx].tags[0].version: Invalid value: -1: version for nginx/1 can not be less than 0',
    );
  });

  it('shows the value given and the values allowed for imagePullPolicy', () => {
    assert.equal(
      formatFieldErrors(validateNodeImage(nodeImage({ nginx: { tags: [tag('1', { imagePullPolicy: 'Never' })] } }))),
      'spec.images[nginx].tags[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", "IfNotPresent"',
    );
  });

  it('rejects an empty image name and a missing tag list', () => {
    assert.deepEqual(only(validateNodeImage(nodeImage({ '': { tags: [tag('1')] } }))), {
      field: 'spec.images[]',
      type: 'FieldValueRequired',
      message: 'image name can not be empty',
    });
    assert.equal(only(validateNodeImage(nodeImage({ nginx: {} }))).message, 'tags for image nginx must be set');
  });

  it('reports names and tags that cannot be pulled, and unknown pull policies (our additions)', () => {
    const bad = only(validateNodeImage(nodeImage({ Nginx: { tags: [tag('1')] } })));
    assert.equal(bad.field, 'spec.images[Nginx].tags[0].tag');
    assert.match(bad.message, /must be lowercase/);
    const digest = only(validateNodeImage(nodeImage({ nginx: { tags: [tag('sha256:abc')] } })));
    assert.match(digest.message, /sha256 needs 64 hex digits/);
    const policy = only(validateNodeImage(nodeImage({ nginx: { tags: [tag('1', { imagePullPolicy: 'Never' })] } })));
    assert.equal(policy.type, 'FieldValueNotSupported');
    assert.equal(policy.field, 'spec.images[nginx].tags[0].imagePullPolicy');
  });

  it('turns malformed input into type errors instead of throwing', () => {
    for (const input of [null, 'x', [], { spec: 'x' }, { spec: { images: [] } }, { spec: { images: { a: 1 } } }]) {
      const errors = validateNodeImage(input);
      assert.ok(errors.length > 0, JSON.stringify(input));
      assert.ok(
        errors.every((e) => e.type === 'FieldValueTypeInvalid'),
        JSON.stringify(errors),
      );
    }
    const shapes = validateNodeImage(
      nodeImage({
        nginx: {
          pullSecrets: 'x',
          sandboxConfig: { labels: { a: 1 } },
          tags: [5, tag('1', { version: 'one', pullPolicy: { ttlSecondsAfterFinished: 1.5 } })],
        },
      }),
    );
    assert.deepEqual(
      shapes.map((e) => e.field),
      [
        'spec.images[nginx].pullSecrets',
        'spec.images[nginx].sandboxConfig.labels[a]',
        'spec.images[nginx].tags[0]',
        'spec.images[nginx].tags[1].version',
        'spec.images[nginx].tags[1].pullPolicy.ttlSecondsAfterFinished',
      ],
    );
  });
});
