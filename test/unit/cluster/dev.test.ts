import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { humanLine } from '../../cluster/dev.js';
import { k8sLayout } from '../../cluster/k8s/layout.js';
import { agentLaunch } from '../../cluster/k8s/system.js';
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
    const node = k8sLayout('/tmp/kd-dev-test/cluster', 120, 2).nodes[1]!;
    const shell = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--inspect';
    try {
      const launch = agentLaunch(node, { holderPid: 42, kubeconfig: '/k', nodeOptions: flags, ipam: true });
      assert.equal(launch.env.NODE_OPTIONS, flags, 'the DaemonSet wins over a NODE_OPTIONS of the shell');
      assert.equal(launch.env.NODE_NAME, 'kd-node-2');
      assert.equal(launch.env.KUBECONFIG, '/k');
      assert.equal(launch.env.LOG_LEVEL ?? 'info', 'info');
      // inside the node: its namespaces, its own CRI socket at the usual path, /healthz on its address
      assert.equal(launch.command, 'nsenter');
      assert.deepEqual(launch.args.slice(0, 5), ['-t', '42', '--mount', '--net', '--']);
      const args = launch.args.join(' ');
      assert.match(args, /--runtime-socket \/run\/containerd\/containerd\.sock/);
      assert.match(args, /--addr 10\.120\.255\.12:10221/);
      assert.match(args, /--ipam --ipam-data-dir \/var\/lib\/cni\/kruise-ipam/);
    } finally {
      if (shell === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = shell;
    }
  });

  it('says so when the DaemonSet has no NODE_OPTIONS', () => {
    const manifest = 'spec: {template: {spec: {containers: [{name: daemon, env: [{name: LOG_LEVEL, value: info}]}]}}}';
    assert.throws(() => daemonSetNodeOptions(manifest), /the daemon container sets no NODE_OPTIONS/);
  });
});
