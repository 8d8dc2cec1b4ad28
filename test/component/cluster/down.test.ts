// down on a second, private cluster (its own CLUSTER_DIR), so the shared cluster of this test run is untouched:
// two clusters run side by side, and down leaves no process, mount, cgroup, bridge or socket behind.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { downCluster, upCluster } from '../../cluster/components.js';
import { clusterPaths } from '../../cluster/paths.js';
import { run } from '../../cluster/runtime/exec.js';
import { mountsUnder } from '../../cluster/runtime/mounts.js';
import { findProcesses, isAlive, readPidFile } from '../../cluster/runtime/processes.js';
import { toClusterEnv, useCluster, type ClusterEnv } from '../../support/cluster.js';
import { rawCri } from './raw-cri.js';

async function startPod(env: ClusterEnv): Promise<void> {
  const cri = rawCri(env.runtimeSocket);
  try {
    const uid = `down-test-${Date.now()}`;
    const config = {
      metadata: { name: 'left-running', uid, namespace: 'down-test', attempt: 0 },
      linux: { cgroup_parent: `${env.podCgroupParent}/pod${uid}` },
    };
    const { pod_sandbox_id: sandboxId } = await cri.runtime('RunPodSandbox', { config });
    await cri.image('PullImage', { image: { image: env.images.busybox1 } });
    const { container_id: containerId } = await cri.runtime('CreateContainer', {
      pod_sandbox_id: sandboxId,
      sandbox_config: config,
      config: {
        metadata: { name: 'sleeper', attempt: 0 },
        image: { image: env.images.busybox1 },
        command: ['sleep', '3600'],
      },
    });
    await cri.runtime('StartContainer', { container_id: containerId });
  } finally {
    cri.close();
  }
}

function cgroupDirsNamed(name: string): string[] {
  return readdirSync('/sys/fs/cgroup', { withFileTypes: true })
    .filter((hierarchy) => hierarchy.isDirectory())
    .map((hierarchy) => `/sys/fs/cgroup/${hierarchy.name}/${name}`)
    .filter((dir) => existsSync(dir));
}

describe('local cluster: down', function () {
  let shared: ClusterEnv;
  let dir: string;

  before(async function () {
    shared = await useCluster();
    dir = `${shared.dir}-down-test`;
  });

  after(async function () {
    if (dir) await downCluster({ dir, log: () => undefined, purge: true });
  });

  it('a second cluster runs beside the first and down leaves nothing running behind', async function () {
    const env = toClusterEnv(await upCluster({ dir, log: () => undefined, kind: 'runtime' }));
    for (const [key, value] of [
      ['registry', env.registry],
      ['authRegistry', env.authRegistry],
      ['runtimeSocket', env.runtimeSocket],
      ['podBridge', env.podBridge],
      ['podSubnet', env.podSubnet],
      ['podCgroupParent', env.podCgroupParent],
    ] as const) {
      assert.notEqual(value, shared[key], `${key} must differ between clusters`);
    }
    await startPod(env);
    const paths = clusterPaths(dir);
    const pids = [
      await readPidFile(paths.containerd.pidFile),
      await readPidFile(paths.registry.openPidFile),
      await readPidFile(paths.registry.authPidFile),
    ];
    const podCgroupName = env.podCgroupParent.slice(1);
    assert.ok((await mountsUnder(dir)).length > 0, 'a running pod has mounts under the cluster dir');
    assert.ok(cgroupDirsNamed(podCgroupName).length > 0, 'a running pod has cgroups under the pod cgroup parent');

    await downCluster({ dir, log: () => undefined });

    for (const pid of pids) assert.ok(pid !== undefined && !isAlive(pid), `PID ${String(pid)} stopped`);
    assert.deepEqual(
      findProcesses((args) => args.some((arg) => arg.includes(dir))),
      [],
      'no process mentions the cluster dir',
    );
    assert.deepEqual(await mountsUnder(dir), []);
    assert.deepEqual(cgroupDirsNamed(podCgroupName), []);
    assert.notEqual((await run('ip', ['link', 'show', 'dev', env.podBridge])).code, 0, 'bridge deleted');
    assert.equal(existsSync(env.runtimeSocket), false);
    assert.equal(existsSync(paths.envFile), false);
    // the shared cluster is untouched
    assert.equal((await readFile(clusterPaths(shared.dir).envFile, 'utf8')).includes(shared.runtimeSocket), true);
    assert.ok(isAlive((await readPidFile(clusterPaths(shared.dir).containerd.pidFile))!));

    // down again with nothing running succeeds; --purge removes the directory
    await downCluster({ dir, log: () => undefined });
    await downCluster({ dir, log: () => undefined, purge: true });
    assert.equal(existsSync(dir), false);
  });
});
