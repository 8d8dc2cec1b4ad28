// The NodePodProbe status the agent builds (pure), and the spec it reads (outside input, checked).
import assert from 'node:assert/strict';
import type { NodePodProbe } from '../../../src/api/nodepodprobe.js';
import { specProbes, timingOf } from '../../../src/daemon/podprobe/probe-spec.js';
import { buildNodePodProbeStatus } from '../../../src/daemon/podprobe/probe-status.js';
import type { ProbeResult } from '../../../src/daemon/podprobe/probe-worker.js';

const T1 = '2026-01-01T00:00:01Z';
const T2 = '2026-01-01T00:00:02Z';

const npp: Pick<NodePodProbe, 'spec'> = {
  spec: {
    podProbes: [
      {
        name: 'a',
        namespace: 'ns',
        uid: 'ua',
        probes: [
          { name: 'm#x', containerName: 'c', probe: { exec: { command: ['x'] } } },
          { name: 'm#y', containerName: 'c', probe: { exec: { command: ['y'] } } },
        ],
      },
      { name: 'b', namespace: 'ns', uid: 'ub', probes: [{ name: 'm#x', containerName: 'c', probe: {} }] },
    ],
  },
};

describe('podprobe status and spec', () => {
  it('one entry per probe in spec: results, else the entry the object has; transition time kept while the state is', () => {
    const { targets } = specProbes(npp);
    const results: Record<string, ProbeResult> = {
      'ua/m#x': { state: 'Succeeded', message: 'ok', lastProbeTime: T2, changedAt: T2 },
    };
    const status = buildNodePodProbeStatus(
      targets,
      {
        podProbeStatuses: [
          {
            name: 'a',
            namespace: 'ns',
            uid: 'ua',
            probeStates: [
              { name: 'm#x', state: 'Succeeded', lastProbeTime: T1, lastTransitionTime: T1 },
              { name: 'm#y', state: 'Failed', lastProbeTime: T1, lastTransitionTime: T1, message: 'no' },
              { name: 'm#gone', state: 'Failed', lastProbeTime: T1, lastTransitionTime: T1 },
            ],
          },
          { name: 'old', namespace: 'ns', uid: 'uold', probeStates: [{ name: 'm#x', state: 'Succeeded' }] },
        ],
      },
      (t) => results[`${t.podUid}/${t.probeName}`],
    );
    assert.deepEqual(status, {
      podProbeStatuses: [
        {
          name: 'a',
          namespace: 'ns',
          uid: 'ua',
          probeStates: [
            { name: 'm#x', state: 'Succeeded', lastProbeTime: T2, lastTransitionTime: T1, message: 'ok' },
            { name: 'm#y', state: 'Failed', lastProbeTime: T1, lastTransitionTime: T1, message: 'no' },
          ],
        },
      ],
    });
    assert.deepEqual(
      buildNodePodProbeStatus(targets, undefined, () => undefined),
      {},
    );
  });

  it('skips spec entries it cannot use and names them; floors the timing', () => {
    const { targets, problems } = specProbes({
      spec: {
        podProbes: [
          { name: 'a', namespace: 'ns', uid: '', probes: [] },
          'junk' as never,
          {
            name: 'b',
            namespace: 'ns',
            uid: 'ub',
            probes: [
              { name: 'p', containerName: 'c', probe: { tcpSocket: { port: 1 } } },
              { name: 'p', containerName: 'd', probe: { tcpSocket: { port: 1 } } },
              { name: 'q', containerName: '', probe: {} },
            ],
          },
        ],
      },
    });
    assert.deepEqual(
      targets.map((t) => `${t.podName}/${t.containerName}/${t.probeName}`),
      ['b/c/p'],
    );
    assert.deepEqual(problems, [
      "spec.podProbes[0] lacks its pod's name, namespace or uid",
      'spec.podProbes[1] is not an object',
      'spec.podProbes[2].probes[1]: probe "p" is listed twice for pod ns/b',
      'spec.podProbes[2].probes[2] lacks its name, containerName or probe',
    ]);
    assert.deepEqual(timingOf({ periodSeconds: 0, timeoutSeconds: -1, successThreshold: 0, failureThreshold: 3 }), {
      periodMs: 1000,
      initialDelayMs: 1000,
      timeoutMs: 1000,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });
});
