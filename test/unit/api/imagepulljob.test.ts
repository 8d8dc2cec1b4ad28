import assert from 'node:assert/strict';
import { defaultImageListPullJob, defaultImagePullJob } from '../../../src/api/defaults.js';
import { formatFieldErrors } from '../../../src/api/field-errors.js';
import type { ImageListPullJob } from '../../../src/api/imagelistpulljob.js';
import { validateImageListPullJob } from '../../../src/api/imagelistpulljob-validation.js';
import type { ImagePullJob } from '../../../src/api/imagepulljob.js';
import { validateImagePullJob } from '../../../src/api/imagepulljob-validation.js';

function job(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImagePullJob',
    metadata: { name: 'j', namespace: 'default' },
    spec: { image: 'nginx:1.25', completionPolicy: { type: 'Always' }, ...spec },
  };
}

function listJob(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'ImageListPullJob',
    metadata: { name: 'l', namespace: 'default' },
    spec: { images: ['nginx:1.25', 'busybox:1.36'], completionPolicy: {}, ...spec },
  };
}

function messages(errors: { message: string }[]): string[] {
  return errors.map((e) => e.message);
}

describe('ImagePullJob defaulting', () => {
  it('defaults completion type, pull policy and imagePullPolicy, keeping what is set', () => {
    const input: ImagePullJob = {
      metadata: { name: 'j' },
      spec: { image: 'nginx', completionPolicy: {}, pullPolicy: { backoffLimit: 1 } },
    };
    const out = defaultImagePullJob(input);
    assert.deepEqual(out.spec, {
      image: 'nginx',
      completionPolicy: { type: 'Always' },
      pullPolicy: { backoffLimit: 1, timeoutSeconds: 600 },
      imagePullPolicy: 'IfNotPresent',
    });
    assert.deepEqual(input.spec.completionPolicy, {}, 'input untouched');
    const never = defaultImagePullJob({
      metadata: {},
      spec: { image: 'nginx', completionPolicy: { type: 'Never' }, imagePullPolicy: 'Always' },
    });
    assert.equal(never.spec.completionPolicy.type, 'Never');
    assert.equal(never.spec.imagePullPolicy, 'Always');
  });

  it('leaves a pullPolicy or completionPolicy that is not an object as sent, for the schema to name', () => {
    const input = {
      metadata: { name: 'j' },
      spec: { image: 'nginx', completionPolicy: 'done', pullPolicy: 'fast' },
    } as unknown as ImagePullJob;
    const out = defaultImagePullJob(input);
    assert.equal(out.spec.pullPolicy, 'fast');
    assert.equal(out.spec.completionPolicy, 'done');
    const list = defaultImageListPullJob({
      metadata: {},
      spec: { images: ['nginx'], completionPolicy: {}, pullPolicy: 7 },
    } as unknown as ImageListPullJob);
    assert.equal(list.spec.pullPolicy, 7);
  });

  it('ImageListPullJob: same but leaves imagePullPolicy unset', () => {
    const input: ImageListPullJob = { metadata: {}, spec: { images: ['nginx'], completionPolicy: {} } };
    const out = defaultImageListPullJob(input);
    assert.deepEqual(out.spec, {
      images: ['nginx'],
      completionPolicy: { type: 'Always' },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
    });
  });
});

describe('ImagePullJob validation', () => {
  it('accepts valid jobs', () => {
    assert.deepEqual(validateImagePullJob(job({})), []);
    assert.deepEqual(
      validateImagePullJob(
        job({
          image: 'registry.k8s.io/pause@sha256:9ae97d36d26566ff84e8893c64a6dc4fe8ca6d1144bf5b87b2b85a32def253c7',
          parallelism: '3',
          selector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] },
          pullPolicy: { timeoutSeconds: 300, backoffLimit: 1 },
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 300, ttlSecondsAfterFinished: 60 },
          pullSecrets: ['s1'],
          sandboxConfig: { labels: { a: 'b' } },
          imagePullPolicy: 'Always',
        }),
      ),
      [],
    );
    assert.deepEqual(validateImagePullJob(job({ podSelector: { matchLabels: { app: 'web' } }, parallelism: 0 })), []);
    assert.deepEqual(validateImagePullJob(job({ completionPolicy: { type: 'Never' } })), []);
  });

  it("rejects OpenKruise's documented example, which sets both names and matchLabels", () => {
    const docs = job({
      image: 'nginx:1.9.1',
      parallelism: 10,
      selector: { names: ['node-1', 'node-2'], matchLabels: { 'node-type': 'xxx' } },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
      pullPolicy: { backoffLimit: 3, timeoutSeconds: 300 },
      pullSecrets: ['secret-name1', 'secret-name2'],
    });
    assert.deepEqual(validateImagePullJob(docs), [
      {
        field: 'spec.selector',
        type: 'FieldValueInvalid',
        message: 'can not set both names and labelSelector in this spec.selector',
      },
    ]);
  });

  it("gives OpenKruise's message for each rule", () => {
    const cases: [spec: Record<string, unknown>, message: string | RegExp][] = [
      [{ image: '' }, 'image can not be empty'],
      [{ image: 'Nginx' }, /^invalid image Nginx: .*must be lowercase/],
      [{ selector: { names: ['a', 'a'] } }, 'duplicated name in selector names'],
      [
        { selector: { matchExpressions: [{ key: 'k', operator: 'Has' }] } },
        /^invalid selector: "Has" is not a valid label selector operator/,
      ],
      [
        { selector: { matchExpressions: [{ key: 'k', operator: 'In', values: [] }] } },
        /^invalid selector: .*values set can't be empty/,
      ],
      [{ selector: { matchLabels: { 'bad key': 'v' } } }, /^invalid selector: key: Invalid value: "bad key"/],
      [{ selector: {}, podSelector: {} }, 'can not set both selector and podSelector'],
      [{ podSelector: { matchLabels: { a: 'bad value!' } } }, /^invalid podSelector: /],
      [{ parallelism: '50%' }, 'parallelism does not support percentage value'],
      [{ parallelism: 'abc' }, 'parallelism must be a valid integer: strconv.ParseInt: parsing "abc": invalid syntax'],
      [{ parallelism: '99999999999' }, /value out of range/],
      [{ parallelism: -1 }, 'parallelism must be non-negative'],
      [{ parallelism: '-2' }, 'parallelism must be non-negative'],
      [
        { completionPolicy: { type: 'Always', activeDeadlineSeconds: 599 } },
        'completionPolicy.activeDeadlineSeconds must be greater than or equal to pullPolicy.timeoutSeconds (600, its default)',
      ],
      [
        { completionPolicy: { activeDeadlineSeconds: 100 }, pullPolicy: { timeoutSeconds: 101 } },
        'completionPolicy.activeDeadlineSeconds must be greater than or equal to pullPolicy.timeoutSeconds (101)',
      ],
      [
        { completionPolicy: { type: 'Never', ttlSecondsAfterFinished: 10 } },
        'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType',
      ],
      [{ completionPolicy: { type: 'Sometimes' } }, 'supported values: "Always", "Never"'],
      [{ imagePullPolicy: 'Never' }, 'supported values: "Always", "IfNotPresent"'],
    ];
    for (const [spec, expected] of cases) {
      const found = messages(validateImagePullJob(job(spec)));
      assert.equal(found.length, 1, `${JSON.stringify(spec)} → ${JSON.stringify(found)}`);
      if (typeof expected === 'string') assert.equal(found[0], expected);
      else assert.match(found[0]!, expected);
    }
    // Equal deadline and timeout is fine.
    assert.deepEqual(validateImagePullJob(job({ completionPolicy: { activeDeadlineSeconds: 600 } })), []);
  });

  it('a denial reads field, value given, what is allowed', () => {
    const cases: [spec: Record<string, unknown>, text: string][] = [
      [{ parallelism: -1 }, 'spec.parallelism: Invalid value: -1: parallelism must be non-negative'],
      [{ parallelism: '10%' }, 'spec.parallelism: Invalid value: "10%": parallelism does not support percentage value'],
      [
        { completionPolicy: { type: 'Sometimes' } },
        'spec.completionPolicy.type: Unsupported value: "Sometimes": supported values: "Always", "Never"',
      ],
      [
        { completionPolicy: { type: 'Never', ttlSecondsAfterFinished: 10 } },
        'spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 10: activeDeadlineSeconds and ' +
          'ttlSecondsAfterFinished can only work with Always CompletionPolicyType',
      ],
      [
        { completionPolicy: { activeDeadlineSeconds: 100 } },
        'spec.completionPolicy.activeDeadlineSeconds: Invalid value: 100: completionPolicy.activeDeadlineSeconds ' +
          'must be greater than or equal to pullPolicy.timeoutSeconds (600, its default)',
      ],
      [
        { imagePullPolicy: 'Never' },
        'spec.imagePullPolicy: Unsupported value: "Never": supported values: "Always", "IfNotPresent"',
      ],
      [
        { selector: { names: ['a', 'a'] } },
        'spec.selector.names[1]: Duplicate value: "a": duplicated name in selector names',
      ],
      [
        { pullPolicy: { timeoutSeconds: '600' } },
        'spec.pullPolicy.timeoutSeconds: Invalid value: "600": must be of type integer, got string',
      ],
    ];
    for (const [spec, text] of cases) assert.equal(formatFieldErrors(validateImagePullJob(job(spec))), text);
  });

  it('denies a negative timeoutSeconds, backoffLimit, ttlSecondsAfterFinished or activeDeadlineSeconds (OpenKruise admits them)', () => {
    assert.equal(
      formatFieldErrors(
        validateImagePullJob(
          job({
            pullPolicy: { timeoutSeconds: -5, backoffLimit: -1 },
            completionPolicy: { type: 'Always', ttlSecondsAfterFinished: -1 },
          }),
        ),
      ),
      '[spec.pullPolicy.timeoutSeconds: Invalid value: -5: must be greater than 0, ' +
        'spec.pullPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0, ' +
        'spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0]',
    );
    // Only the rule that failed: a negative deadline is not also reported as shorter than the timeout.
    assert.equal(
      formatFieldErrors(validateImagePullJob(job({ completionPolicy: { activeDeadlineSeconds: -1 } }))),
      'spec.completionPolicy.activeDeadlineSeconds: Invalid value: -1: must be greater than 0',
    );
    assert.equal(
      formatFieldErrors(validateImagePullJob(job({ pullPolicy: { timeoutSeconds: 0 } }))),
      'spec.pullPolicy.timeoutSeconds: Invalid value: 0: must be greater than 0',
    );
    assert.deepEqual(
      validateImagePullJob(job({ pullPolicy: { backoffLimit: 0 }, completionPolicy: { ttlSecondsAfterFinished: 0 } })),
      [],
    );
  });

  it('on update, lets through a negative number the job already had (its finalizer can still change), not a new one', () => {
    const old = job({ pullPolicy: { timeoutSeconds: -5 }, completionPolicy: { ttlSecondsAfterFinished: -1 } });
    const finalized = { ...old, metadata: { name: 'j', namespace: 'default', finalizers: ['x'] } };
    assert.deepEqual(validateImagePullJob(finalized, { oldObject: old }), []);
    assert.equal(
      formatFieldErrors(
        validateImagePullJob(
          job({ pullPolicy: { timeoutSeconds: -6 }, completionPolicy: { ttlSecondsAfterFinished: -1 } }),
          {
            oldObject: old,
          },
        ),
      ),
      'spec.pullPolicy.timeoutSeconds: Invalid value: -6: must be greater than 0',
    );
    const oldList = listJob({ pullPolicy: { backoffLimit: -1 } });
    assert.deepEqual(validateImageListPullJob(oldList, { oldObject: oldList }), []);
    assert.equal(validateImageListPullJob(oldList, { oldObject: listJob({}) }).length, 1);
  });

  it('forbids changing pullSecrets on update', () => {
    const old = job({ pullSecrets: ['a'] });
    assert.deepEqual(validateImagePullJob(job({ pullSecrets: ['a'] }), { oldObject: old }), []);
    assert.deepEqual(validateImagePullJob(job({ pullSecrets: ['a', 'b'] }), { oldObject: old }), [
      { field: 'spec.pullSecrets', type: 'FieldValueForbidden', message: 'spec.pullSecrets is immutable' },
    ]);
    assert.deepEqual(validateImagePullJob(job({}), { oldObject: job({ pullSecrets: [] }) }), []);
  });

  it('never throws on malformed input', () => {
    for (const input of [
      undefined,
      7,
      { spec: null },
      { spec: { image: 5, selector: 'x', parallelism: true, pullSecrets: [1] } },
    ]) {
      const errors = validateImagePullJob(input);
      assert.ok(errors.length > 0);
    }
    const typed = validateImagePullJob(job({ pullPolicy: { timeoutSeconds: '600' }, sandboxConfig: 'x' }));
    assert.deepEqual(
      typed.map((e) => [e.field, e.type]),
      [
        ['spec.pullPolicy.timeoutSeconds', 'FieldValueTypeInvalid'],
        ['spec.sandboxConfig', 'FieldValueTypeInvalid'],
      ],
    );
  });
});

describe('ImageListPullJob validation', () => {
  it('accepts a valid list job', () => {
    assert.deepEqual(validateImageListPullJob(listJob({ parallelism: 2 })), []);
    // No deadline-versus-timeout check for list jobs (as OpenKruise).
    assert.deepEqual(validateImageListPullJob(listJob({ completionPolicy: { activeDeadlineSeconds: 1 } })), []);
  });

  it("gives OpenKruise's message for each rule", () => {
    const tooMany = Array.from({ length: 256 }, (_, i) => `img${i}:1`);
    const cases: [spec: Record<string, unknown>, message: string | RegExp, field: string][] = [
      [{ images: [] }, 'image can not be empty', 'spec.images'],
      [{ images: ['nginx', 'nginx'] }, 'images cannot have duplicate values', 'spec.images[1]'],
      [{ images: tooMany }, 'the maximum number of images cannot > 255', 'spec.images'],
      [{ images: ['nginx', 'Bad'] }, /^invalid image Bad: /, 'spec.images[1]'],
      [{ parallelism: '10%' }, 'parallelism does not support percentage value', 'spec.parallelism'],
      [
        { completionPolicy: { type: 'Never', activeDeadlineSeconds: 5 } },
        'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType',
        'spec.completionPolicy.activeDeadlineSeconds',
      ],
      [
        { selector: { names: ['n'], matchLabels: { a: 'b' } } },
        'can not set both names and labelSelector in this spec.selector',
        'spec.selector',
      ],
    ];
    for (const [spec, expected, field] of cases) {
      const errors = validateImageListPullJob(listJob(spec));
      assert.equal(errors.length, 1, `${JSON.stringify(spec).slice(0, 80)} → ${JSON.stringify(errors)}`);
      assert.equal(errors[0]!.field, field);
      if (typeof expected === 'string') assert.equal(errors[0]!.message, expected);
      else assert.match(errors[0]!.message, expected);
    }
    assert.equal(validateImageListPullJob({ spec: { completionPolicy: {} } })[0]?.message, 'image can not be empty');
  });

  it('denies negative pull and completion numbers as ImagePullJob does, showing the value given', () => {
    assert.equal(
      formatFieldErrors(
        validateImageListPullJob(
          listJob({
            pullPolicy: { timeoutSeconds: -5, backoffLimit: -1 },
            completionPolicy: { ttlSecondsAfterFinished: -1, activeDeadlineSeconds: 0 },
          }),
        ),
      ),
      '[spec.pullPolicy.timeoutSeconds: Invalid value: -5: must be greater than 0, ' +
        'spec.pullPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0, ' +
        'spec.completionPolicy.activeDeadlineSeconds: Invalid value: 0: must be greater than 0, ' +
        'spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0]',
    );
    assert.equal(
      formatFieldErrors(validateImageListPullJob(listJob({ images: ['nginx', 'nginx'] }))),
      'spec.images[1]: Duplicate value: "nginx": images cannot have duplicate values',
    );
  });
});
