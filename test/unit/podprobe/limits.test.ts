// PodProbeMarker size limits at admission: each limit at its edge (the limit passes, one more is refused with a
// message naming the field and the limit), the pod share of many moderate probes, the controller's own check that
// leaves sizes to the NodePodProbe budget, and an update that leaves an oversized stored spec as it was.
import assert from 'node:assert/strict';
import { formatFieldErrors } from '../../../src/api/field-errors.js';
import {
  MAX_CONTAINER_NAME_LENGTH,
  MAX_EXEC_ARGS,
  MAX_EXEC_COMMAND_BYTES,
  MAX_HTTP_HEADER_NAME_BYTES,
  MAX_HTTP_HEADER_VALUE_BYTES,
  MAX_HTTP_HEADERS,
  MAX_HTTP_PATH_BYTES,
  MAX_POD_SHARE_BYTES,
  MAX_PROBE_NAME_LENGTH,
  MAX_PROBES_PER_MARKER,
  podShareBytes,
} from '../../../src/api/podprobemarker-limits.js';
import { validatePodProbeMarker } from '../../../src/api/podprobemarker-validation.js';
import type { AdmissionRequest } from '../../../src/controller/admission/admission-review.js';
import {
  podProbeMarkerWebhookHandlers,
  PPM_VALIDATING_WEBHOOK_PATH,
} from '../../../src/controller/admission/podprobemarker/handler.js';
import { SPEC_BUDGET_BYTES } from '../../../src/controller/podprobemarker/node-budget.js';

type Json = Record<string, unknown>;

const probe = (i: number, handler: Json = { exec: { command: ['true'] } }, extra: Json = {}): Json => ({
  name: `p${i}`,
  containerName: 'main',
  probe: handler,
  podConditionType: `example.com/p${i}`,
  ...extra,
});

const markerWith = (probes: Json[]): Json => ({
  metadata: { name: 'm', namespace: 'ns' },
  spec: { selector: { matchLabels: { app: 'game' } }, probes },
});

const errorsOf = (probes: Json[]): string => {
  const errors = validatePodProbeMarker(markerWith(probes));
  return errors.length === 0 ? '' : formatFieldErrors(errors);
};
const exec = (command: string[]): Json => ({ exec: { command } });
const http = (httpGet: Json): Json => ({ httpGet: { port: 80, path: '/', ...httpGet } });

/** [case, probes at the limit, probes one past it, the message expected past it] */
const edges: [string, Json[], Json[], string][] = [
  [
    'probes per marker',
    Array.from({ length: MAX_PROBES_PER_MARKER }, (_, i) => probe(i)),
    Array.from({ length: MAX_PROBES_PER_MARKER + 1 }, (_, i) => probe(i)),
    `spec.probes: must have at most ${MAX_PROBES_PER_MARKER} items (has 17)`,
  ],
  [
    'probe name',
    [probe(0, undefined, { name: 'n'.repeat(MAX_PROBE_NAME_LENGTH) })],
    [probe(0, undefined, { name: 'n'.repeat(MAX_PROBE_NAME_LENGTH + 1) })],
    'spec.probes[0].name: must have at most 63 characters (has 64)',
  ],
  [
    'container name',
    [probe(0, undefined, { containerName: 'c'.repeat(MAX_CONTAINER_NAME_LENGTH) })],
    [probe(0, undefined, { containerName: 'c'.repeat(MAX_CONTAINER_NAME_LENGTH + 1) })],
    'spec.probes[0].containerName: must have at most 63 characters (has 64)',
  ],
  [
    'exec arguments',
    [probe(0, exec(Array.from({ length: MAX_EXEC_ARGS }, () => 'a')))],
    [probe(0, exec(Array.from({ length: MAX_EXEC_ARGS + 1 }, () => 'a')))],
    'spec.probes[0].probe.exec.command: must have at most 64 items (has 65)',
  ],
  [
    'exec command bytes (multi-byte characters count as their bytes)',
    [probe(0, exec(['sh', '-c', 'é'.repeat((MAX_EXEC_COMMAND_BYTES - 4) / 2)]))],
    [probe(0, exec(['sh', '-c', 'é'.repeat((MAX_EXEC_COMMAND_BYTES - 4) / 2), 'x']))],
    'spec.probes[0].probe.exec.command: must have at most 2048 bytes (has 2049)',
  ],
  [
    'httpGet path',
    [probe(0, http({ path: '/' + 'p'.repeat(MAX_HTTP_PATH_BYTES - 1) }))],
    [probe(0, http({ path: '/' + 'p'.repeat(MAX_HTTP_PATH_BYTES) }))],
    'spec.probes[0].probe.httpGet.path: must have at most 2048 bytes (has 2049)',
  ],
  [
    'httpGet headers',
    [probe(0, http({ httpHeaders: Array.from({ length: MAX_HTTP_HEADERS }, () => ({ name: 'X-A', value: 'b' })) }))],
    [
      probe(
        0,
        http({ httpHeaders: Array.from({ length: MAX_HTTP_HEADERS + 1 }, () => ({ name: 'X-A', value: 'b' })) }),
      ),
    ],
    'spec.probes[0].probe.httpGet.httpHeaders: must have at most 16 items (has 17)',
  ],
  [
    'httpGet header name',
    [probe(0, http({ httpHeaders: [{ name: 'X'.repeat(MAX_HTTP_HEADER_NAME_BYTES), value: 'b' }] }))],
    [probe(0, http({ httpHeaders: [{ name: 'X'.repeat(MAX_HTTP_HEADER_NAME_BYTES + 1), value: 'b' }] }))],
    'spec.probes[0].probe.httpGet.httpHeaders[0].name: must have at most 256 bytes (has 257)',
  ],
  [
    'httpGet header value',
    [probe(0, http({ httpHeaders: [{ name: 'X-A', value: 'v'.repeat(MAX_HTTP_HEADER_VALUE_BYTES) }] }))],
    [probe(0, http({ httpHeaders: [{ name: 'X-A', value: 'v'.repeat(MAX_HTTP_HEADER_VALUE_BYTES + 1) }] }))],
    'spec.probes[0].probe.httpGet.httpHeaders[0].value: must have at most 1024 bytes (has 1025)',
  ],
];

describe('PodProbeMarker size limits', () => {
  for (const [what, atLimit, past, message] of edges) {
    it(`${what}: the limit passes, one more is refused`, () => {
      assert.equal(errorsOf(atLimit), '');
      assert.ok(errorsOf(past).includes(message), errorsOf(past));
    });
  }

  it('refuses probes that each fit but together give one pod more than its share of a NodePodProbe', () => {
    const command = (n: number): Json => exec(['sh', '-c', 'x'.repeat(n)]);
    const fits = Array.from({ length: 4 }, (_, i) => probe(i, command(1400)));
    assert.ok(podShareBytes('m', fits) <= MAX_POD_SHARE_BYTES);
    assert.equal(errorsOf(fits), '');
    const over = Array.from({ length: 5 }, (_, i) => probe(i, command(1400)));
    assert.match(
      errorsOf(over),
      /spec\.probes: must have at most 6144 bytes as NodePodProbe entries of one pod \(has \d+\)/,
    );
  });

  it('a marker at its share fills a node of 110 pods (the kubelet default) within the spec budget', () => {
    const perPodEntry = MAX_POD_SHARE_BYTES + 400; // the entry's name, namespace, uid and IP
    assert.ok(110 * perPodEntry < SPEC_BUDGET_BYTES);
  });

  it('the issue’s 1 MB exec command is refused at admission', () => {
    assert.match(errorsOf([probe(0, exec(['sh', '-c', 'x'.repeat(1_000_000)]))]), /at most 2048 bytes \(has 1000004\)/);
  });

  it('the controller’s own check leaves sizes to the NodePodProbe budget', () => {
    const big = markerWith([probe(0, exec(['sh', '-c', 'x'.repeat(100_000)]))]);
    assert.deepEqual(validatePodProbeMarker(big, { sizeLimits: false }), []);
  });

  it('admission: refuses an oversized create, passes an update that leaves a stored oversized spec as it was', async () => {
    const handler = podProbeMarkerWebhookHandlers()[PPM_VALIDATING_WEBHOOK_PATH]!;
    const big = markerWith([probe(0, exec(['sh', '-c', 'x'.repeat(5000)]))]);
    const request = (operation: string, object: Json, oldObject?: Json): AdmissionRequest =>
      ({
        uid: 'u',
        operation,
        object,
        oldObject,
        kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'PodProbeMarker' },
      }) as unknown as AdmissionRequest;
    const created = await handler(request('CREATE', big));
    assert.equal(created.allowed, false);
    assert.match(created.message ?? '', /exec\.command: must have at most 2048 bytes/);
    const finalized = structuredClone(big);
    (finalized.metadata as Json).finalizers = ['kruise.io/node-pod-probe-cleanup'];
    assert.equal((await handler(request('UPDATE', finalized, big))).allowed, true);
    const grown = markerWith([probe(0, exec(['sh', '-c', 'x'.repeat(6000)]))]);
    assert.equal((await handler(request('UPDATE', grown, big))).allowed, false, 'a changed spec is checked');
  });
});
