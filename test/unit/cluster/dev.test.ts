import assert from 'node:assert/strict';
import { humanLine } from '../../cluster/dev.js';

describe('npm run dev: human-readable logs', () => {
  it('renders a pino JSON line as time, process, level, message and fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-11-22T16:18:28.256Z',
      pid: 7,
      name: 'kruise-daemon',
      msg: 'image pulled',
      node: 'kd-node-2',
      ms: 918,
    });
    assert.equal(
      humanLine('agent/kd-node-2', line),
      '16:18:28.256 agent/kd-node-2 INFO  image pulled  node=kd-node-2 ms=918',
    );
  });

  it('passes other lines through with the process name', () => {
    assert.equal(humanLine('controller', 'plain text'), 'controller plain text');
  });
});
