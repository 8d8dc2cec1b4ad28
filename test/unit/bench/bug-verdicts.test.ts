import assert from 'node:assert/strict';
import { throttleWaits, verdictFigures, verdictTable, type BugVerdict } from '../../bench/bug-verdicts.js';

const verdict: BugVerdict = {
  issue: 2534,
  title: 'digest-pinned image',
  ours: { passed: true, evidence: 'tag status Succeeded', ms: 1200 },
  theirs: { passed: false, evidence: 'Failed: invalid reference | format\nsecond line', ms: 4100 },
};

describe('bench: OpenKruise bugs side by side (verdicts)', () => {
  it('prints one row per issue: both verdicts, the evidence with its duration, pipes and breaks escaped', () => {
    assert.deepEqual(verdictTable([verdict]).split('\n'), [
      '| issue | case | OpenKruise | ours | evidence (OpenKruise) | evidence (ours) |',
      '| ----- | ---- | ---------- | ---- | --------------------- | --------------- |',
      '| #2534 | digest-pinned image | fails | passes | Failed: invalid reference \\| format second line (4 s) | tag status Succeeded (1 s) |',
    ]);
  });

  it('gives each verdict as 1 or 0 and the durations, per agent', () => {
    assert.deepEqual(
      verdictFigures(verdict).map((f) => [f.name, f.value]),
      [
        ['issue2534.passed.ours', 1],
        ['issue2534.passed.openkruise', 0],
        ['issue2534.duration.ours', 1200],
        ['issue2534.duration.openkruise', 4100],
      ],
    );
  });

  it("reads client-go's client-side throttling waits from log lines", () => {
    assert.deepEqual(
      throttleWaits([
        'I1127 15:01:02.123456       1 request.go:661] Waited for 1.192s due to client-side throttling, not priority and fairness, request: PUT:https://x',
        'I1127 15:01:02.2 1 request.go:661] Waited for 212.5ms due to client-side throttling, not priority and fairness, request: GET:https://x',
        'I1127 15:01:03 unrelated',
      ]),
      [1.192, 0.2125],
    );
  });
});
