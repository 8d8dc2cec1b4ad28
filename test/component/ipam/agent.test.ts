// The real kruise-daemon binary with --ipam --ipam-install: it installs the plugin and conflist, watches the store
// (a plugin ADD shows in /metrics within moments), and `kruise-daemon ipam ls` lists the address.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster, type ClusterEnv } from '../../support/cluster.js';
import { waitFor } from '../../support/wait.js';
import { AgentProcess, httpGet, runToExit } from '../daemon/agent-process.js';

describe('kruise-daemon --ipam (the real binary)', function () {
  let cluster: ClusterEnv;
  let dir: string;
  let agent: AgentProcess | undefined;

  before(async () => {
    cluster = await useCluster();
    dir = mkdtempSync(join(tmpdir(), 'kruise-ipam-agent-'));
  });
  after(async () => {
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs the plugin and conflist, reports the store in /metrics, and ipam ls lists it', async function () {
    const data = join(dir, 'data');
    agent = new AgentProcess({
      env: {
        NODE_NAME: cluster.vars.NODE_NAME ?? 'node-1',
        KUBECONFIG: cluster.vars.KUBECONFIG ?? '',
        LOG_LEVEL: 'info',
      },
      args: [
        '--addr',
        '127.0.0.1:0',
        '--runtime-socket',
        cluster.runtimeSocket,
        '--ipam-install',
        '--ipam-install-mode',
        'in-place',
        '--cni-bin-dir',
        join(dir, 'bin'),
        '--cni-conf-dir',
        join(dir, 'conf'),
        '--ipam-data-dir',
        data,
        '--ipam-subnet',
        '10.77.0.0/24',
        '--ipam-network-name',
        'agentnet',
      ],
    });
    const base = await agent.baseUrl();
    await waitFor(() => agent!.findLog(/managing kruise-ipam reservations/), { message: 'the ipreservation module' });
    const conflist = JSON.parse(readFileSync(join(dir, 'conf', '10-kruise-ipam.conflist'), 'utf8')) as {
      name: string;
      plugins: Array<{ ipam: { type: string; dataDir: string } }>;
    };
    assert.equal(conflist.name, 'agentnet');
    assert.deepEqual([conflist.plugins[0]!.ipam.type, conflist.plugins[0]!.ipam.dataDir], ['kruise-ipam', data]);

    // the runtime would run the installed plugin with this conflist's ipam block
    const add = spawnSync(join(dir, 'bin', 'kruise-ipam'), [], {
      input: JSON.stringify({ cniVersion: '1.0.0', name: 'agentnet', ...conflist.plugins[0] }),
      env: {
        CNI_COMMAND: 'ADD',
        CNI_CONTAINERID: 'sandbox-1',
        CNI_IFNAME: 'eth0',
        CNI_NETNS: '/x',
        CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_UID=u1',
      },
      encoding: 'utf8',
    });
    assert.equal(add.status, 0, add.stdout);
    await waitFor(
      async () =>
        /^kruise_daemon_ipam_allocated_ips\{network="agentnet"\} 1$/m.test((await httpGet(`${base}/metrics`)).body),
      { message: 'the allocation in /metrics' },
    );
    const ls = await runToExit(['ipam', 'ls', '--ipam-data-dir', data]);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /^agentnet\s+10\.77\.0\.2\s+held\s+default\/web-0\s+sandbox-1\s/m);
    const exit = await agent.stop();
    assert.equal(exit.code, 0, agent.stderr);
  });
});
