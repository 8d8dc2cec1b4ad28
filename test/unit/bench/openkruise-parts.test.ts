import assert from 'node:assert/strict';
import type { ContainerRecreateRequest } from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import { goDurationMs } from '../../bench/openkruise/agents.js';
import { parseEvent } from '../../bench/openkruise/container-exits.js';
import { syncStatuses } from '../../bench/openkruise/manager-stand-in.js';

describe('bench openkruise: containerd exit events and the manager stand-in', () => {
  it("reads the time and topic of a `ctr events` line (ms, the event's own clock)", () => {
    const line =
      '2026-11-27 15:01:38.822275254 +0000 UTC k8s.io /tasks/exit {"container_id":"abc","id":"abc","pid":7,"exit_status":0}';
    assert.deepEqual(parseEvent(line), {
      ms: Date.parse('2026-11-27T15:01:38.822Z'),
      topic: '/tasks/exit',
      payload: '{"container_id":"abc","id":"abc","pid":7,"exit_status":0}',
    });
    assert.equal(parseEvent('2026-11-27 15:01:38 +0000 UTC k8s.io /containers/delete {}')?.topic, '/containers/delete');
    assert.equal(parseEvent('ctr: failed to dial'), undefined);
  });

  it("writes the statuses of the CRR's containers that run and started at or after its creation, as its manager", () => {
    const crr = {
      metadata: { name: 'r', creationTimestamp: '2026-11-27T15:00:10Z' },
      spec: { podName: 'p', containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] },
    } as ContainerRecreateRequest;
    const pod = {
      status: {
        containerStatuses: [
          {
            name: 'a',
            ready: true,
            restartCount: 1,
            image: 'i',
            imageID: '',
            containerID: 'containerd://n',
            state: { running: { startedAt: '2026-11-27T15:00:10Z' } },
          },
          {
            name: 'b',
            ready: true,
            restartCount: 0,
            image: 'i',
            imageID: '',
            containerID: 'containerd://o',
            state: { running: { startedAt: '2026-11-27T15:00:09Z' } },
          },
          { name: 'c', ready: false, restartCount: 1, image: 'i', imageID: '', state: { waiting: {} } },
        ],
      },
    } as WirePod;
    assert.deepEqual(syncStatuses(crr, pod), [
      { name: 'a', ready: true, restartCount: 1, containerID: 'containerd://n' },
    ]);
    assert.equal(
      JSON.stringify(syncStatuses(crr, pod)),
      '[{"name":"a","ready":true,"restartCount":1,"containerID":"containerd://n"}]',
    );
  });

  it("reads a Go duration as OpenKruise's daemon logs it (cost=...)", () => {
    assert.equal(goDurationMs('320.286386ms'), 320.286386);
    assert.equal(goDurationMs('1.5s'), 1500);
    assert.equal(goDurationMs('1m2.5s'), 62_500);
    assert.equal(goDurationMs('800µs'), 0.8);
    assert.equal(goDurationMs('fast'), undefined);
  });
});
