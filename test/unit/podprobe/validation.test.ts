// PodProbeMarker admission: the validation table (OpenKruise's checks and messages, and ours: grpc refused,
// kubelet-owned condition types refused, label values), the selector's immutability, and the handler's answers.
import assert from 'node:assert/strict';
import { formatFieldErrors } from '../../../src/api/field-errors.js';
import {
  DUPLICATE_POLICY_STATE_MESSAGE,
  DUPLICATE_PROBE_NAME_MESSAGE,
  EMPTY_CONTAINER_NAME_MESSAGE,
  EMPTY_POLICY_MESSAGE,
  EMPTY_PROBE_NAME_MESSAGE,
  EMPTY_PROBES_MESSAGE,
  EMPTY_SELECTOR_MESSAGE,
  GRPC_MESSAGE,
  PROBE_HOST_MESSAGE,
  IMMUTABLE_SELECTOR_MESSAGE,
  MORE_THAN_ONE_HANDLER_MESSAGE,
  NIL_SELECTOR_MESSAGE,
  NO_HANDLER_MESSAGE,
  NO_MARK_MESSAGE,
  POLICY_STATE_MESSAGE,
  PROBE_NAME_SEPARATOR_MESSAGE,
  validatePodProbeMarker,
} from '../../../src/api/podprobemarker-validation.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import {
  podProbeMarkerWebhookHandlers,
  PPM_VALIDATING_WEBHOOK_PATH,
} from '../../../src/controller/admission/podprobemarker/handler.js';

type Json = Record<string, unknown>;

const goodProbe = (): Json => ({
  name: 'healthy',
  containerName: 'main',
  probe: { exec: { command: ['true'] }, periodSeconds: 5 },
  podConditionType: 'game.kruise.io/healthy',
  markerPolicy: [
    { state: 'Succeeded', labels: { 'gameserver-state': 'ready' } },
    { state: 'Failed', annotations: { 'example.com/down': 'yes' } },
  ],
});

function object(spec: Json = {}, probe: Json = {}): Json {
  return {
    metadata: { name: 'm', namespace: 'ns' },
    spec: { selector: { matchLabels: { app: 'game' } }, probes: [{ ...goodProbe(), ...probe }], ...spec },
  };
}

/** [case, object, the message expected (a substring of the formatted errors), or '' for valid] */
const table: [string, Json, string][] = [
  ['a valid marker', object(), ''],
  ['httpGet with a named port', object({}, { probe: { httpGet: { path: '/healthz', port: 'http' } } }), ''],
  ['tcpSocket with a number', object({}, { probe: { tcpSocket: { port: 7000 } } }), ''],
  ['only a condition type', object({}, { markerPolicy: undefined }), ''],
  ['only a policy', object({}, { podConditionType: undefined }), ''],
  ['no selector', object({ selector: undefined }), NIL_SELECTOR_MESSAGE],
  ['an empty selector', object({ selector: {} }), EMPTY_SELECTOR_MESSAGE],
  [
    'a bad selector',
    object({ selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } }),
    "values set can't be empty",
  ],
  ['no probes', object({ probes: [] }), EMPTY_PROBES_MESSAGE],
  ['a probe without a name', object({}, { name: '' }), EMPTY_PROBE_NAME_MESSAGE],
  ["a probe name with '#'", object({}, { name: 'a#b' }), PROBE_NAME_SEPARATOR_MESSAGE],
  ['a probe named as a kubelet condition', object({}, { name: 'Ready' }), "probe name can't be Ready"],
  [
    'two probes of one name',
    object({ probes: [goodProbe(), { ...goodProbe(), podConditionType: 'x/y' }] }),
    DUPLICATE_PROBE_NAME_MESSAGE,
  ],
  ['no containerName', object({}, { containerName: '' }), EMPTY_CONTAINER_NAME_MESSAGE],
  ['no handler', object({}, { probe: { periodSeconds: 1 } }), NO_HANDLER_MESSAGE],
  [
    'two handlers',
    object({}, { probe: { exec: { command: ['a'] }, tcpSocket: { port: 80 } } }),
    MORE_THAN_ONE_HANDLER_MESSAGE,
  ],
  ['a grpc probe', object({}, { probe: { grpc: { port: 9000 } } }), GRPC_MESSAGE],
  [
    'a tcpSocket probe naming a host (CVE-2026-24005)',
    object({}, { probe: { tcpSocket: { port: 80, host: '169.254.169.254' } } }),
    `spec.probes[0].probe.tcpSocket.host: Forbidden: ${PROBE_HOST_MESSAGE}`,
  ],
  [
    'an httpGet probe naming a host',
    object({}, { probe: { httpGet: { port: 80, path: '/', host: 'kubernetes.default' } } }),
    `spec.probes[0].probe.httpGet.host: Forbidden: ${PROBE_HOST_MESSAGE}`,
  ],
  [
    'an httpGet probe with a Host header',
    object({}, { probe: { httpGet: { port: 80, path: '/', httpHeaders: [{ name: 'host', value: 'x' }] } } }),
    `spec.probes[0].probe.httpGet.httpHeaders: Forbidden: ${PROBE_HOST_MESSAGE}`,
  ],
  [
    'an exec probe without a command',
    object({}, { probe: { exec: { command: [] } } }),
    'spec.probes[0].probe.exec.command: Required value',
  ],
  [
    'an httpGet probe without a path',
    object({}, { probe: { httpGet: { port: 80 } } }),
    'probe.httpGet.path: Required value',
  ],
  [
    'a port out of range',
    object({}, { probe: { tcpSocket: { port: 70000 } } }),
    'must be between 1 and 65535, inclusive',
  ],
  [
    'a bad port name',
    object({}, { probe: { tcpSocket: { port: 'Bad_Name' } } }),
    'must contain only alpha-numeric characters',
  ],
  [
    'an unknown scheme',
    object({}, { probe: { httpGet: { path: '/', port: 80, scheme: 'FTP' } } }),
    'supported values: "HTTP", "HTTPS"',
  ],
  [
    'a bad header name',
    object({}, { probe: { httpGet: { path: '/', port: 80, httpHeaders: [{ name: 'a b', value: 'c' }] } } }),
    'a valid HTTP header must consist of alphanumeric characters',
  ],
  [
    'a negative period',
    object({}, { probe: { exec: { command: ['a'] }, periodSeconds: -1 } }),
    'periodSeconds: Invalid value: -1: must be greater than or equal to 0',
  ],
  [
    'a negative threshold',
    object({}, { probe: { exec: { command: ['a'] }, failureThreshold: -2 } }),
    'failureThreshold',
  ],
  ['neither condition type nor policy', object({}, { podConditionType: undefined, markerPolicy: [] }), NO_MARK_MESSAGE],
  [
    'a condition type that is no qualified name',
    object({}, { podConditionType: 'bad type!' }),
    'name part must consist of alphanumeric characters',
  ],
  [
    "a kubelet's condition type",
    object({}, { podConditionType: 'ContainersReady' }),
    "podConditionType can't be ContainersReady",
  ],
  [
    'Kruise\u2019s own condition type',
    object({}, { podConditionType: 'InPlaceUpdateReady' }),
    "podConditionType can't be InPlaceUpdateReady",
  ],
  [
    'one condition type twice',
    object({ probes: [goodProbe(), { ...goodProbe(), name: 'other' }] }),
    'podConditionType game.kruise.io/healthy must be unique in podProbeMarker',
  ],
  [
    'an unknown policy state',
    object({}, { markerPolicy: [{ state: 'Unknown', labels: { a: 'b' } }] }),
    POLICY_STATE_MESSAGE,
  ],
  [
    'one policy state twice',
    object(
      {},
      {
        markerPolicy: [
          { state: 'Failed', labels: { a: 'b' } },
          { state: 'Failed', labels: { a: 'c' } },
        ],
      },
    ),
    DUPLICATE_POLICY_STATE_MESSAGE,
  ],
  ['a policy with no marks', object({}, { markerPolicy: [{ state: 'Failed' }] }), EMPTY_POLICY_MESSAGE],
  [
    'a bad label key',
    object({}, { markerPolicy: [{ state: 'Failed', labels: { 'a/b/c': 'x' } }] }),
    'a qualified name must consist',
  ],
  [
    'a bad label value',
    object({}, { markerPolicy: [{ state: 'Failed', labels: { a: 'no spaces' } }] }),
    'a valid label must be an empty string',
  ],
  [
    'a bad annotation key',
    object({}, { markerPolicy: [{ state: 'Failed', annotations: { '-x': 'y' } }] }),
    'name part must consist',
  ],
  ['no spec', { metadata: { name: 'm' } }, 'spec: Required value'],
  ['probes not a list', object({ probes: 'x' }), 'spec.probes: Invalid value: "x": must be of type array, got string'],
];

describe('PodProbeMarker validation', () => {
  for (const [name, obj, expected] of table) {
    it(expected ? `refuses ${name}` : `accepts ${name}`, () => {
      const errors = validatePodProbeMarker(obj);
      const text = formatFieldErrors(errors);
      if (expected === '') assert.deepEqual(errors, [], text);
      else assert.ok(text.includes(expected), `${JSON.stringify(text)} should say ${JSON.stringify(expected)}`);
    });
  }

  it('keeps the selector immutable on update, as OpenKruise', () => {
    const before = object();
    const after = object({ selector: { matchLabels: { app: 'other' } } });
    assert.match(
      formatFieldErrors(validatePodProbeMarker(after, { oldObject: before })),
      new RegExp(IMMUTABLE_SELECTOR_MESSAGE),
    );
    assert.deepEqual(validatePodProbeMarker(object(), { oldObject: before }), []);
  });
});

describe('PodProbeMarker admission handler', () => {
  const handler = podProbeMarkerWebhookHandlers()[PPM_VALIDATING_WEBHOOK_PATH]!;
  const request = (operation: AdmissionRequest['operation'], obj: Json, old?: Json): AdmissionRequest => ({
    uid: 'u',
    kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'PodProbeMarker' },
    resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'podprobemarkers' },
    operation,
    namespace: 'ns',
    object: obj,
    ...(old && { oldObject: old }),
  });

  it('allows a valid marker and denies an invalid one with the field errors', async () => {
    assert.deepEqual(await handler(request('CREATE', object())), { allowed: true });
    const denied = await handler(request('CREATE', object({}, { containerName: '' })));
    assert.ok(!denied.allowed);
    assert.equal(denied.code, 400);
    assert.match(denied.message, /probe containerName can't be empty in PodProbeMarker\./);
    const grpc = await handler(request('CREATE', object({}, { probe: { grpc: { port: 1 } } })));
    assert.equal(grpc.allowed ? undefined : grpc.code, 403);
  });

  it('denies a selector change, and lets a marker being deleted lose its finalizer whatever its spec', async () => {
    const changed = await handler(request('UPDATE', object({ selector: { matchLabels: { a: 'b' } } }), object()));
    assert.equal(changed.allowed, false);
    const invalid = object({ probes: [] });
    (invalid.metadata as Json).deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.deepEqual(await handler(request('UPDATE', invalid, invalid)), { allowed: true });
  });
});
