import assert from 'node:assert/strict';
import { cpuTicksOfStat, markdownTable, sideBySide } from '../../bench/side-by-side.js';
import { metricSum } from '../../support/nodeimages.js';

describe('bench: ours beside OpenKruise (side-by-side helpers)', () => {
  it('gives both figures and the ratio ours/openkruise, without a ratio when OpenKruise measured 0', () => {
    assert.deepEqual(sideBySide({ name: 'rss.idle', unit: 'MiB', ours: 30, theirs: 60, note: 'idle' }), [
      { name: 'rss.idle.ours', value: 30, unit: 'MiB', note: 'idle' },
      { name: 'rss.idle.openkruise', value: 60, unit: 'MiB' },
      { name: 'rss.idle ours/openkruise', value: 0.5, unit: 'x' },
    ]);
    assert.deepEqual(
      sideBySide({ name: 'apiRequests.perMinute', unit: 'count', ours: 1, theirs: 0 }).map((f) => f.name),
      ['apiRequests.perMinute.ours', 'apiRequests.perMinute.openkruise'],
    );
  });

  it('prints the pairs as an aligned Markdown table', () => {
    const table = markdownTable([
      { name: 'pull20', unit: 'ms', ours: 1234.56, theirs: 4000 },
      { name: 'cpu.steady', unit: 's', ours: 0.5, theirs: 0 },
    ]);
    assert.equal(
      table,
      [
        '| figure     | unit | ours | OpenKruise | ours/OpenKruise |',
        '| ---------- | ---- | ---- | ---------- | --------------- |',
        '| pull20     | ms   | 1235 | 4000       | 0.31            |',
        '| cpu.steady | s    | 0.50 | 0          | -               |',
      ].join('\n'),
    );
  });

  it("reads utime + stime from /proc/PID/stat, whatever the process's name holds", () => {
    const rest = 'S 1 2 3 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 5000 100000 2000';
    assert.equal(cpuTicksOfStat(`4242 (kruise-daemon) ${rest}`), 325);
    assert.equal(cpuTicksOfStat(`4242 (a (b) c) ${rest}`), 325);
    assert.throws(() => cpuTicksOfStat('garbage'), /not a \/proc\/PID\/stat line/);
  });

  it('sums a Prometheus counter over the series carrying the wanted labels', () => {
    const body = [
      '# TYPE apiserver_flowcontrol_dispatched_requests_total counter',
      'apiserver_flowcontrol_dispatched_requests_total{flow_schema="kd-bench",priority_level="workload-low"} 7',
      'apiserver_flowcontrol_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"} 90',
      'apiserver_flowcontrol_dispatched_requests_total{flow_schema="kd-bench",priority_level="other"} 3',
    ].join('\n');
    assert.equal(metricSum(body, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'kd-bench' }), 10);
    assert.equal(metricSum(body, 'absent_total'), 0);
  });
});
