// `npm run bench -- openkruise-handover`: docs/compatibility.md "Beside OpenKruise" proven on the real local cluster.
// OpenKruise v1.9.1's kruise-manager (manager-process.ts: its CRDs, webhooks and controllers) and its kruise-daemon
// (daemon-process.ts, standing in for its DaemonSet's pod) serve kd-node-1; a CRR (a container whose preStop hook
// takes PRESTOP_SECONDS) and an ImagePullJob (its blobs held by a registry proxy: the pull cannot finish) are
// started; once OpenKruise's daemon has both in flight (CRR Recreating, tag Pulling) it is stopped, as the DaemonSet
// controller stops it when the node is labelled for ours, and our agent starts on the node with the agent-only
// overlay's RBAC (deploy/overlays/agent-only without its CRDs: ServiceAccount kruise-daemon-ts, a token bound to a
// pod on the node); the proxy then lets the blobs through. Checked: the CRR completes with the container restarted
// exactly once (restartCount +1, one StopContainer of the old container in the node's containerd log), the job
// completes and the image is on the node; counted: the preStop runs (its own line in the container's log), the
// PullImage calls (containerd's log) and the registry requests (the proxy's counters). Not part of `npm test`.
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../src/api/imagepulljob.js';
import { packageRoot } from '../../src/util/repo-root.js';
import { agentTokenPod, agentTokenPodName, kubectl, serviceAccountKubeconfig } from '../cluster/k8s/system.js';
import { OpenKruiseDaemonProcess } from '../cluster/openkruise/daemon-process.js';
import { OpenKruiseManagerProcess } from '../cluster/openkruise/manager-process.js';
import { daemonApiObjects, swapInObjects } from '../cluster/openkruise/openkruise.js';
import { runChecked } from '../cluster/runtime/exec.js';
import {
  bareId,
  containerStatus,
  createCrr,
  getCrr,
  getPod,
  runPod,
  SLEEP_FOREVER,
} from '../e2e/containerrecreate/stack.js';
import { getNodeImage, removeImages, tagStatusOf } from '../support/nodeimages.js';
import { nodeRegistryProxy } from '../support/real-images.js';
import { agentKubeconfigOf, startAgentOn } from '../support/real-cluster.js';
import { createTestNamespace, deleteTestNamespace } from '../support/test-namespace.js';
import { waitFor } from '../support/wait.js';
import { openKruiseOnFirstNode } from './openkruise/first-node.js';
import type { BenchSuite, Figure } from './framework.js';

const POD = 'handover';
const CRR = 'handover-crr';
const JOB = 'handover-pull';
const PRESTOP_SECONDS = 8;
const AGENT_ONLY = join(packageRoot(), 'deploy', 'overlays', 'agent-only');
const AGENT_ONLY_SELECTOR = 'app.kubernetes.io/component!=crds';
const AGENT_ONLY_ACCOUNT = 'kruise-daemon-ts';

/** `from` with one more layer (a file with this run's time in it), copied to `to` (umoci insert, skopeo). */
async function pushImageWithOwnLayer(from: string, to: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kd-handover-image-'));
  try {
    const layout = `${join(dir, 'layout')}:image`;
    const file = join(dir, 'handover');
    await writeFile(file, `hand-over run at ${new Date().toISOString()}\n`);
    const tls = ['--src-tls-verify=false', '--dest-tls-verify=false'];
    await runChecked('skopeo', ['copy', '--quiet', ...tls, `docker://${from}`, `oci:${layout}`]);
    await runChecked('umoci', ['insert', '--image', layout, file, '/handover']);
    await runChecked('skopeo', ['copy', '--quiet', ...tls, `oci:${layout}`, `docker://${to}`]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Lines of a file from a byte offset on (a log written by another process). */
function linesFrom(file: string, offset: number): string[] {
  return readFileSync(file).subarray(offset).toString('utf8').split('\n');
}

export const openKruiseHandoverSuite: BenchSuite = {
  name: 'openkruise-handover',
  description:
    "a node handed over from OpenKruise's kruise-daemon to our agent (agent-only) with a CRR and a pull in flight",
  inDefaultRun: false,
  async run(context) {
    const { log } = context;
    const { build, cluster, node, client, cri } = await openKruiseOnFirstNode(context);
    const namespace = await createTestNamespace(client, 'openkruise-handover', { forPods: true });
    context.defer(() => deleteTestNamespace(client, namespace));
    const scope = { client, namespace };

    // the job's image: a copy no pod runs, served through a proxy that holds its blobs, absent from the node
    const served = await nodeRegistryProxy(cluster);
    context.defer(() => served.close());
    const source = `${cluster.registry}/openkruise-handover/busybox:1`;
    // busybox 2.0 plus a layer of its own (a file naming this run): containerd skips fetching a layer whose unpacked
    // snapshot it has, so only a layer no other image has keeps the pull waiting on the held blobs
    await pushImageWithOwnLayer(cluster.images.busybox2, source);
    const repository = `${served.proxy.host}/openkruise-handover/busybox`;
    const pullRef = `${repository}:1`;
    await removeImages(cri, [pullRef, source]);

    log(`OpenKruise ${build.version}'s kruise-manager on the host`);
    const manager = await OpenKruiseManagerProcess.start({ build, layout: cluster.layout });
    context.defer(() => manager.stop());
    await waitFor(() => manager.ready(), { timeoutMs: 120_000, intervalMs: 250, message: 'kruise-manager /readyz' });
    const restoreDaemonObjects = swapInObjects(cluster.layout, daemonApiObjects(cluster.layout, build));
    context.defer(() => restoreDaemonObjects());
    log(`OpenKruise's kruise-daemon on ${node.name}`);
    const theirs = await OpenKruiseDaemonProcess.startHealthy({
      binary: build.daemon,
      node,
      kubeconfig: agentKubeconfigOf(cluster, node),
      logFile: join(cluster.layout.logDir, `openkruise-handover-daemon-${node.name}.log`),
    });
    context.defer(() => theirs.stop());

    const before = await runPod(
      scope,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: POD, namespace },
        spec: {
          nodeName: node.name,
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: 'app',
              image: cluster.images.busybox1,
              command: SLEEP_FOREVER,
              lifecycle: {
                preStop: { exec: { command: ['sh', '-c', `echo PRESTOP > /proc/1/fd/1; sleep ${PRESTOP_SECONDS}`] } },
              },
            },
          ],
        },
      },
      120_000,
    );
    const old = containerStatus(before, 'app');
    const containerdLog = join(node.logDir, 'containerd.log');
    const containerdFrom = statSync(containerdLog).size;

    served.proxy.stallBlobs = true;
    await client.create<ImagePullJob>(
      IMAGE_PULL_JOBS,
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'ImagePullJob',
        metadata: { name: JOB, namespace },
        spec: {
          image: pullRef,
          selector: { names: [node.name] },
          parallelism: 1,
          pullPolicy: { timeoutSeconds: 300, backoffLimit: 1 },
          completionPolicy: { type: 'Always', activeDeadlineSeconds: 900 },
        },
      },
      { namespace },
    );
    await createCrr(scope, CRR, {
      podName: POD,
      containers: [{ name: 'app' }],
      strategy: { terminationGracePeriodSeconds: 30 },
    });
    const created = performance.now();
    await waitFor(
      async () => {
        const crr = await getCrr(scope, CRR);
        const ni = await getNodeImage(client, node.name);
        const tag = ni?.status && tagStatusOf(ni.status, repository, '1');
        return crr?.status?.phase === 'Recreating' && tag?.phase === 'Pulling';
      },
      {
        timeoutMs: 60_000,
        intervalMs: 100,
        message: "OpenKruise's daemon with the CRR Recreating and the tag Pulling",
      },
    );
    const inFlightMs = performance.now() - created;
    log(`both in flight after ${Math.round(inFlightMs)} ms; stopping OpenKruise's kruise-daemon (SIGTERM)`);
    const stoppedAt = performance.now();
    const exit = await theirs.stop();
    const manifestsAtHandover = served.proxy.manifestRequests();
    const crrAtHandover = await getCrr(scope, CRR);

    log(`our agent on ${node.name} with the agent-only RBAC (${AGENT_ONLY_ACCOUNT})`);
    const applied = kubectl(cluster.layout, ['apply', '-k', AGENT_ONLY, '-l', AGENT_ONLY_SELECTOR]);
    if (!applied.ok) throw new Error(`kubectl apply -k ${AGENT_ONLY}: ${applied.out}`);
    context.defer(() =>
      kubectl(cluster.layout, ['delete', '--ignore-not-found', '-k', AGENT_ONLY, '-l', AGENT_ONLY_SELECTOR]),
    );
    const tokenPod = agentTokenPod(cluster.layout, node, cluster.vars.SANDBOX_IMAGE!, AGENT_ONLY_ACCOUNT);
    context.defer(() =>
      kubectl(cluster.layout, [
        'delete',
        'pod',
        '--ignore-not-found',
        '-n',
        'kruise-system',
        agentTokenPodName(node, AGENT_ONLY_ACCOUNT),
      ]),
    );
    const kubeconfig = serviceAccountKubeconfig(
      cluster.layout,
      'kruise-system',
      AGENT_ONLY_ACCOUNT,
      join(cluster.layout.k8sDir, 'credentials', `${AGENT_ONLY_ACCOUNT}-${node.name}.kubeconfig`),
      2,
      tokenPod,
    );
    const ours = await startAgentOn(cluster, node, { agentEnv: { KUBECONFIG: kubeconfig } });
    context.defer(() => ours.process.stop());
    const oursReadyMs = performance.now() - stoppedAt;
    // our pull reaches the registry (its manifest; the blobs are still held), then the blobs are let through
    await waitFor(() => served.proxy.manifestRequests() > manifestsAtHandover, {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: "our agent's pull of the tag at the registry",
    });
    served.proxy.stallBlobs = false;

    const crr = await waitFor(
      () => getCrr(scope, CRR).then((c) => (c?.status?.phase === 'Completed' ? c : undefined)),
      { timeoutMs: 120_000, intervalMs: 200, message: `CRR ${CRR} Completed` },
    );
    const crrMs = performance.now() - stoppedAt;
    const job = await waitFor(
      () =>
        client
          .get<ImagePullJob>(IMAGE_PULL_JOBS, JOB, { namespace })
          .then((j) => (j.status?.completionTime ? j : undefined)),
      { timeoutMs: 180_000, intervalMs: 250, message: `ImagePullJob ${JOB} completed` },
    );
    const jobMs = performance.now() - stoppedAt;
    const after = await waitFor(
      () =>
        getPod(scope, POD).then((p) => {
          const s = p && containerStatus(p, 'app');
          return s?.state?.running && s.ready && s.containerID !== old.containerID ? p : undefined;
        }),
      { timeoutMs: 60_000, message: `${POD}/app running again` },
    );
    const now = containerStatus(after, 'app');
    const onNode = (await cri.imageStatus({ image: { image: pullRef } })).image?.id;

    const containerd = linesFrom(containerdLog, containerdFrom);
    const stops = containerd.filter((l) =>
      l.includes(`StopContainer for \\"${bareId(old.containerID)}\\" with timeout`),
    );
    const pulls = containerd.filter((l) => l.includes(`msg="PullImage \\"${pullRef}\\""`));
    const previous = kubectl(cluster.layout, ['logs', '-n', namespace, POD, '-c', 'app', '--previous']);
    const preStops = previous.ok ? previous.out.split('\n').filter((l) => l.trim() === 'PRESTOP').length : -1;
    const restarts = (now.restartCount ?? 0) - (old.restartCount ?? 0);

    const checks: [string, boolean, string][] = [
      [
        'CRR Completed',
        crr.status?.phase === 'Completed',
        `${crr.status?.phase} ${JSON.stringify(crr.status?.containerRecreateStates)}`,
      ],
      [
        'container restarted exactly once',
        restarts === 1,
        `restartCount ${old.restartCount ?? 0} -> ${now.restartCount ?? 0}`,
      ],
      ['one StopContainer of the old container', stops.length === 1, `${stops.length} in containerd's log`],
      [
        'job completed, succeeded 1',
        job.status?.succeeded === 1,
        `succeeded ${job.status?.succeeded}, failed ${job.status?.failed}, message ${job.status?.message}`,
      ],
      ['image on the node', onNode !== undefined, onNode ?? 'absent'],
    ];
    const lines = [
      `in flight at the hand-over: CRR ${crrAtHandover?.status?.phase} ${JSON.stringify(crrAtHandover?.status?.containerRecreateStates)}; tag Pulling; OpenKruise's daemon exited ${JSON.stringify(exit)}`,
      ...checks.map(([what, ok, evidence]) => `${ok ? 'ok  ' : 'FAIL'} ${what}: ${evidence}`),
      `counted: preStop runs ${preStops} (PRESTOP lines in the old container's log), PullImage calls ${pulls.length} (containerd), registry requests through the proxy: ${served.proxy.manifestRequests()} manifest, ${served.proxy.blobRequests()} blob`,
      `times from the stop of OpenKruise's daemon: ours ready ${Math.round(oursReadyMs)} ms, CRR Completed ${Math.round(crrMs)} ms, job completed ${Math.round(jobMs)} ms`,
    ];
    log(`hand-over on ${node.name}:\n${lines.join('\n')}`);
    if (checks.some(([, ok]) => !ok))
      throw new Error(
        `hand-over: ${checks
          .filter(([, ok]) => !ok)
          .map(([w]) => w)
          .join(', ')} failed`,
      );
    const figures: Figure[] = [
      {
        name: 'inFlight',
        value: inFlightMs,
        unit: 'ms',
        note: 'CRR and job created -> Recreating and Pulling (theirs)',
      },
      { name: 'oursReady', value: oursReadyMs, unit: 'ms', note: "OpenKruise's daemon stopped -> our agent ready" },
      { name: 'crrCompleted', value: crrMs, unit: 'ms', note: "from OpenKruise's daemon's stop" },
      {
        name: 'jobCompleted',
        value: jobMs,
        unit: 'ms',
        note: "from OpenKruise's daemon's stop (blobs let through after ours started)",
      },
      { name: 'restarts', value: restarts, unit: 'count' },
      { name: 'stopContainer', value: stops.length, unit: 'count' },
      { name: 'preStopRuns', value: preStops, unit: 'count' },
      { name: 'pullImageCalls', value: pulls.length, unit: 'count' },
    ];
    return figures;
  },
};
