import assert from 'node:assert/strict';
import { besideRecorded } from '../../bench/framework.js';
import { EMULATOR_FIGURES } from '../../bench/imagepuller.js';

describe('bench: figures beside the ones recorded elsewhere (besideRecorded)', () => {
  it('adds the recorded value to the note and a new/old ratio after the figure', () => {
    const old = EMULATOR_FIGURES['pull20.agent']!;
    const out = besideRecorded(
      [{ name: 'pull20.agent', value: old * 2, unit: 'ms', note: 'median of 5' }],
      EMULATOR_FIGURES,
      'the emulator',
    );
    assert.deepEqual(out, [
      { name: 'pull20.agent', value: old * 2, unit: 'ms', note: `median of 5; on the emulator: ${old} ms` },
      { name: 'pull20.agent new/old', value: 2, unit: 'x' },
    ]);
  });

  it('leaves a figure without a recorded value alone, and gives no ratio to an old 0', () => {
    const fresh = { name: 'pull20.agent.pullsDone', value: 5, unit: 'ms' };
    const idle = { name: 'apiRequests.idlePerMinute', value: 1, unit: 'count' };
    assert.deepEqual(besideRecorded([fresh, idle], EMULATOR_FIGURES, 'the emulator'), [
      fresh,
      { ...idle, note: 'on the emulator: 0 count' },
    ]);
  });
});
