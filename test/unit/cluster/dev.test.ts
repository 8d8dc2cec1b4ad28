import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { agentEnv, humanLine } from '../../cluster/dev.js';
import { DAEMONSET_MANIFEST, daemonSetNodeOptions } from '../../cluster/deployed-agent.js';

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

describe('npm run dev: the agents run as deployed', () => {
  it("reads the DaemonSet's heap flags from deploy/ and gives them to every agent", () => {
    const flags = daemonSetNodeOptions();
    assert.match(flags, /--max-old-space-size=\d+/);
    assert.ok(readFileSync(DAEMONSET_MANIFEST, 'utf8').includes(flags));
    const env = agentEnv('kd-node-2', { KUBECONFIG: '/k', RUNTIME_SOCKET: '/s' }, { NODE_OPTIONS: '--inspect' });
    assert.equal(env.NODE_OPTIONS, flags, 'the DaemonSet wins over a NODE_OPTIONS of the shell');
    assert.equal(env.NODE_NAME, 'kd-node-2');
    assert.equal(env.KUBECONFIG, '/k');
    assert.equal(env.RUNTIME_SOCKET, '/s');
    assert.equal(env.LOG_LEVEL, 'info');
  });

  it('says so when the DaemonSet has no NODE_OPTIONS', () => {
    const manifest = 'spec: {template: {spec: {containers: [{name: daemon, env: [{name: LOG_LEVEL, value: info}]}]}}}';
    assert.throws(() => daemonSetNodeOptions(manifest), /the daemon container sets no NODE_OPTIONS/);
  });
});
