// A second real cluster in its own directory (one node), so the shared one of this test run is untouched: after a
// crash (every daemon SIGKILLed, pods left running) a second up cleans up and starts, and down leaves no process,
// network namespace, link, iptables rule, cgroup or mount behind, and nothing on the host's own paths.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { downCluster, upCluster } from '../../cluster/components.js';
import { clusterId } from '../../cluster/paths.js';
import { mountsUnder } from '../../cluster/runtime/mounts.js';
import { findProcesses, isAlive, signal } from '../../cluster/runtime/processes.js';
import { realClusterDir, useRealCluster } from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';

const HOST_PATHS = ['/etc/cni', '/opt/cni', '/var/lib/kubelet', '/var/lib/containerd', '/var/log/pods'];

function kubectl(kubeconfig: string, args: string[], input?: string): string {
  const result = spawnSync('kubectl', args, {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    encoding: 'utf8',
    input,
  });
  assert.equal(result.status, 0, `kubectl ${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

function runPod(kubeconfig: string, name: string, image: string): void {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image, command: ['sleep', '3600'] }] },
  };
  kubectl(kubeconfig, ['apply', '-f', '-'], JSON.stringify(pod));
  kubectl(kubeconfig, ['wait', '--for=condition=Ready', `pod/${name}`, '--timeout=90s']);
}

/** What this cluster made that outlives it if down forgets it. */
function leftovers(dir: string, id: string): string[] {
  const found: string[] = [];
  for (const pid of findProcesses((args) => args.some((arg) => arg.includes(dir)))) found.push(`process ${pid}`);
  const netns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
  for (const line of netns.split('\n')) if (line.includes(`kd-${id}-`)) found.push(`netns ${line}`);
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout;
  for (const line of links.split('\n')) if (line.includes(`kd${id}`)) found.push(`link ${line.split(':')[1]?.trim()}`);
  const rules = spawnSync('iptables', ['-w', '5', '-S'], { encoding: 'utf8' }).stdout;
  for (const line of rules.split('\n')) if (line.includes(id)) found.push(`iptables ${line}`);
  for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
    for (const entry of readdirSync(`/sys/fs/cgroup/${hierarchy}`).filter((e) => e.startsWith(`kd-${id}-`))) {
      found.push(`cgroup ${hierarchy}/${entry}`);
    }
  }
  return found;
}

describe('real cluster: crash, up again, down', function () {
  this.timeout(20 * 60_000);
  let dir: string;
  let hostPathsBefore: boolean[];

  before(async () => {
    const shared = await useRealCluster(); // builds the binaries on a cold machine, once
    dir = `${realClusterDir()}-down-test`;
    hostPathsBefore = HOST_PATHS.map((path) => existsSync(path));
    assert.notEqual(shared.dir, dir);
  });
  after(async () => {
    if (dir) await downCluster({ dir, log: () => undefined, purge: true });
  });

  it('comes up again after every daemon was killed, and down then leaves nothing behind', async () => {
    const log = (): void => undefined;
    const env = await upCluster({ dir, log, kind: 'real', nodeCount: 1 });
    const kubeconfig = env.KUBECONFIG!;
    runPod(kubeconfig, 'before-crash', env.TEST_IMAGE_BUSYBOX_1!);
    assert.deepEqual(
      HOST_PATHS.map((path) => existsSync(path)),
      hostPathsBefore,
      "a node's paths live in its own mount namespace only",
    );

    // the crash: every daemon of this cluster dies at once; shims and containers keep running
    const daemons = findProcesses((args) => args.some((arg) => arg.includes(dir)));
    assert.ok(daemons.length >= 8, `daemons found: ${daemons.length}`);
    for (const pid of daemons) signal(pid, 'SIGKILL');
    await waitFor(() => daemons.every((pid) => !isAlive(pid)), { timeoutMs: 10_000, message: 'daemons dead' });

    await upCluster({ dir, log, kind: 'real', nodeCount: 1 });
    runPod(kubeconfig, 'after-crash', env.TEST_IMAGE_BUSYBOX_1!);

    await downCluster({ dir, log });
    assert.deepEqual(leftovers(dir, clusterId(dir)), []);
    assert.deepEqual(await mountsUnder(dir), []);
    assert.deepEqual(
      HOST_PATHS.map((path) => existsSync(path)),
      hostPathsBefore,
    );
  });
});
