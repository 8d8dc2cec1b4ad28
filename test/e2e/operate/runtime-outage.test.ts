// A node's container runtime down for 60 s under the installed system (deploy/overlays/ip-retention with the built
// image: the DaemonSet's real liveness and readiness probes, run by the real kubelet): the runtime (containerd, or
// CRI-O on its cell) is killed (SIGKILL; its shims or conmons and so the agent's container keep running) and started
// again with its own command line. Checked: the
// agent is never restarted (restartCount stays 0, the same container), /livez answers 200 in milliseconds throughout,
// /readyz answers 500 naming the runtime and why, in milliseconds too (the agent's background loop keeps the answer),
// the pod's Ready condition goes False while the runtime is down, and the agent serves again within seconds of
// the runtime's return: its /readyz first, then its pod Ready again as kubelet sees it. The figures are printed.
import assert from 'node:assert/strict';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { nodeRuntimeProcess } from '../../cluster/k8s/nodes.js';
import { agentUrl, kubectl, SYSTEM_NAMESPACE } from '../../cluster/k8s/system.js';
import { runningPid, signal, startDaemon } from '../../cluster/runtime/processes.js';
import { CriClient } from '../../../src/cri/client.js';
import {
  startInClusterSystem,
  useRealCluster,
  type InClusterSystem,
  type RealCluster,
} from '../../support/real-cluster.js';
import { waitFor } from '../../support/wait.js';
import { recordedCommand } from '../../cluster/k8s/process.js';

const OUTAGE_MS = 60_000;

interface AgentPodStatus {
  uid: string;
  ready: boolean;
  /** The Ready condition's reason and message, when it has them. */
  readyWhy: string;
  restartCount: number;
  containerId: string;
}

/** A health endpoint's answer and how long it took. */
interface Answer {
  status: number;
  body: string;
  ms: number;
}

async function ask(url: string): Promise<Answer> {
  const started = performance.now();
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.text(), ms: performance.now() - started };
  } catch (err) {
    return { status: 0, body: (err as Error).message, ms: performance.now() - started };
  }
}

describe("a node's container runtime down for 60 s (in-cluster, the DaemonSet's real probes)", function () {
  this.timeout(600_000);
  let cluster: RealCluster;
  let system: InClusterSystem | undefined;
  let node: NodeLayout;
  /** The runtime's recorded command line (the cluster's own), to start it again as it was. */
  let runtime: {
    command: string;
    args: string[];
    env: Record<string, string>;
    pidFile: string;
    logFile: string;
    marker: string;
  };

  before(async function () {
    this.timeout(900_000);
    cluster = await useRealCluster();
    node = cluster.nodes[0]!;
    const { pidFile, logFile, marker } = nodeRuntimeProcess(node);
    runtime = {
      // its environment too: containerd 2.x finds its runc shim by PATH (the stack's directory first); without it a
      // restarted containerd 2.4 ran Debian's 1.6 shim and failed every sandbox ("type with url ...: not found")
      ...recordedCommand(pidFile),
      pidFile,
      logFile,
      marker,
    };
    system = startInClusterSystem(cluster);
  });

  after(async () => {
    // the runtime back whatever happened, then the system removed
    if ((await runningPid(runtime.pidFile, runtime.marker)) === undefined) await startRuntime();
    system?.stop();
  });

  async function startRuntime(): Promise<void> {
    await startDaemon({
      command: runtime.command,
      args: runtime.args,
      env: runtime.env,
      logFile: runtime.logFile,
      pidFile: runtime.pidFile,
    });
  }

  function agentStatus(): AgentPodStatus {
    const out = kubectl(cluster.layout, [
      'get',
      'pods',
      '-n',
      SYSTEM_NAMESPACE,
      '-l',
      'control-plane=daemon',
      '--field-selector',
      `spec.nodeName=${node.name}`,
      '-o',
      'json',
    ]);
    assert.ok(out.ok, out.out);
    const pods = (
      JSON.parse(out.out) as {
        items: {
          metadata: { uid: string; deletionTimestamp?: string };
          status?: {
            conditions?: { type: string; status: string; reason?: string; message?: string }[];
            containerStatuses?: { restartCount: number; containerID?: string }[];
          };
        }[];
      }
    ).items.filter((p) => !p.metadata.deletionTimestamp);
    assert.equal(pods.length, 1, `one agent pod on ${node.name}`);
    const pod = pods[0]!;
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    const container = pod.status?.containerStatuses?.[0];
    return {
      uid: pod.metadata.uid,
      ready: ready?.status === 'True',
      readyWhy: [ready?.reason, ready?.message].filter(Boolean).join(': '),
      restartCount: container?.restartCount ?? -1,
      containerId: container?.containerID ?? '',
    };
  }

  it('never restarts the agent; it reports not ready with the cause and serves again within seconds', async () => {
    const url = agentUrl(node);
    await waitFor(async () => (await ask(`${url}/readyz`)).status === 200, {
      timeoutMs: 120_000,
      intervalMs: 500,
      message: `the agent on ${node.name} ready`,
    });
    const before = agentStatus();
    assert.ok(before.ready, `the agent pod is Ready before the outage: ${JSON.stringify(before)}`);
    assert.equal(before.restartCount, 0);

    // the outage: the runtime killed as a crash would (its shims or conmons, so the agent's container, keep running)
    const pid = await runningPid(runtime.pidFile, runtime.marker);
    assert.ok(pid !== undefined, `${node.name}'s runtime runs`);
    const down = Date.now();
    signal(pid, 'SIGKILL');

    const livez: Answer[] = [];
    const readyz: Answer[] = [];
    let podNotReadyAt: number | undefined;
    let notReadyWhy = '';
    while (Date.now() - down < OUTAGE_MS) {
      livez.push(await ask(`${url}/livez`));
      readyz.push(await ask(`${url}/readyz?verbose`));
      if (podNotReadyAt === undefined && Date.now() - down > 2_000) {
        const status = agentStatus();
        if (!status.ready) {
          podNotReadyAt = Date.now();
          notReadyWhy = status.readyWhy;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 500)); // a probe's pace, not a wait for a condition
    }
    const readyzDown = readyz.find((a) => a.status === 500);
    assert.ok(readyzDown, `/readyz failed during the outage: ${JSON.stringify(readyz.slice(-3))}`);
    assert.match(readyzDown.body, /\[-\]runtime failed: runtime at \S+ does not answer \(for \d+ s\): /);
    assert.deepEqual(
      livez.filter((a) => a.status !== 200),
      [],
      '/livez answered 200 all through the outage',
    );
    const slowest = Math.max(...livez.map((a) => a.ms), ...readyz.map((a) => a.ms));
    // state read: milliseconds; the bound leaves room for a loaded machine (a call to the runtime took 3000 ms)
    assert.ok(slowest < 1000, `every /livez and /readyz answered within 1 s (slowest ${slowest.toFixed(0)} ms)`);
    assert.ok(podNotReadyAt !== undefined, 'the agent pod left Ready during the outage');

    // the runtime back, as the cluster runs it
    await startRuntime();
    const back = Date.now();
    await waitFor(
      async () => {
        const cri = new CriClient({ socket: node.hostPaths.runtimeSocket });
        try {
          await cri.version({}, { timeoutMs: 1_000 });
          return true;
        } finally {
          cri.close();
        }
      },
      { timeoutMs: 60_000, intervalMs: 100, message: `${node.name}'s runtime answers CRI again` },
    );
    const criBack = Date.now();
    await waitFor(async () => (await ask(`${url}/readyz`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 100,
      message: "the agent's /readyz ok again",
    });
    const agentReady = Date.now();
    const after = await waitFor(() => (agentStatus().ready ? agentStatus() : undefined), {
      timeoutMs: 60_000,
      intervalMs: 250,
      message: 'the agent pod Ready again',
    });
    const podReady = Date.now();
    assert.equal(after.uid, before.uid, 'the same pod');
    assert.equal(after.containerId, before.containerId, 'the same container');
    assert.equal(after.restartCount, 0, 'never restarted by its liveness probe');
    assert.ok(agentReady - criBack < 10_000, `/readyz ok within 10 s of CRI answering (${agentReady - criBack} ms)`);
    assert.ok(podReady - criBack < 30_000, `pod Ready within 30 s of CRI answering (${podReady - criBack} ms)`);

    // nothing restarts it later either (a liveness failure seen during the outage would act now that the runtime is
    // up): observed for three liveness periods, /livez and the restart count sampled as a probe would
    const watchedFrom = Date.now();
    while (Date.now() - watchedFrom < 30_000) {
      assert.equal((await ask(`${url}/livez`)).status, 200, '/livez ok after the outage');
      assert.equal(agentStatus().restartCount, 0, 'still not restarted');
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // a probe's pace, not a wait for a condition
    }
    process.stdout.write(
      `      runtime outage on ${node.name}: pod not Ready ${((podNotReadyAt - down) / 1000).toFixed(1)} s after ` +
        `the kill (${notReadyWhy || 'no reason given'}); the runtime started again after ` +
        `${((back - down) / 1000).toFixed(1)} s, CRI answered ${((criBack - back) / 1000).toFixed(1)} s later; ` +
        `agent /readyz ok ${((agentReady - criBack) / 1000).toFixed(1)} s and pod Ready ` +
        `${((podReady - criBack) / 1000).toFixed(1)} s after CRI answered; slowest /livez or /readyz ` +
        `${slowest.toFixed(0)} ms; restartCount 0\n`,
    );
  });
});
