// emulator: the subject under test (unit tests of the emulator's CRD schema code, test/cluster/apiserver/schema)
import assert from 'node:assert/strict';
import { formatInvalidStatus, type FieldError } from '../../cluster/apiserver/schema/index.js';

const required: FieldError = { field: 'spec.image', type: 'FieldValueRequired', message: 'Required value' };
const notSupported: FieldError = {
  field: 'spec.completionPolicy.type',
  type: 'FieldValueNotSupported',
  message: 'Unsupported value: "Sometimes": supported values: "Always", "Never"',
  detail: 'supported values: "Always", "Never"',
};

describe('formatInvalidStatus', () => {
  it('builds the 422 Status kube-apiserver sends for one error', () => {
    assert.deepEqual(formatInvalidStatus('ImagePullJob', 'job-1', [required], 'apps.kruise.io'), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'ImagePullJob.apps.kruise.io "job-1" is invalid: spec.image: Required value',
      reason: 'Invalid',
      details: {
        name: 'job-1',
        group: 'apps.kruise.io',
        kind: 'ImagePullJob',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.image' }],
      },
      code: 422,
    });
  });

  it('lists several errors in brackets, once each, and keeps every cause', () => {
    const status = formatInvalidStatus('ImagePullJob', 'j', [required, notSupported, required], 'apps.kruise.io');
    assert.equal(
      status.message,
      'ImagePullJob.apps.kruise.io "j" is invalid: [spec.image: Required value, spec.completionPolicy.type: Unsupported value: "Sometimes": supported values: "Always", "Never"]',
    );
    assert.equal(status.details.causes.length, 3);
    assert.deepEqual(status.details.causes[1], {
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "Sometimes": supported values: "Always", "Never"',
      field: 'spec.completionPolicy.type',
    });
  });

  it('core kinds have no group, and no errors means a bare message', () => {
    const status = formatInvalidStatus('ConfigMap', 'cm1', []);
    assert.equal(status.message, 'ConfigMap "cm1" is invalid');
    assert.deepEqual(status.details, { name: 'cm1', kind: 'ConfigMap', causes: [] });
  });
});
