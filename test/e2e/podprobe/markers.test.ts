// Custom probes end to end on the real cluster, OpenKruise's own PodProbeMarker scenarios
// (test/e2e/apps/podprobemarker.go, "pod probe marker exec test" and "test2") adapted: a StatefulSet with one pod on
// each node, two markers (a condition + a label; a condition + an annotation per result), the probes' files created
// and removed with `kubectl exec` instead of a purpose-built image, scale down and up, a pod recreated, a container
// restarted, the markers deleted. What is asserted is what the API server shows (pods, NodePodProbes, markers,
// events): the agent inside each node runs the probes through its containerd, the controller maps the results.
import assert from 'node:assert/strict';
import { EVENT_REASON_KRUISE_PROBE_SUCCEEDED, POD_PROBE_MARKER_LIST_ANNOTATION } from '../../../src/api/constants.js';
import { POD_PROBE_MARKERS, type PodContainerProbe } from '../../../src/api/podprobemarker.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';
import {
  activePods,
  conditionOf,
  createStatefulSet,
  eventsFor,
  execProbe,
  getMarker,
  getNodePodProbe,
  getPod,
  hasCleanupFinalizer,
  markerManifest,
  podProbeEntry,
  podProbesOfNamespace,
  probeStatusesOfNamespace,
  runningPods,
  scaleStatefulSet,
  shIn,
  startProbeStack,
  statefulSetManifest,
  type PodObject,
  type ProbeStack,
  podShows as shows,
} from './stack.js';

const STS = 'probe-sts';
const SELECTOR = `app=${STS}`;
const HEALTHY = 'game.kruise.io/healthy';
const CHECK = 'game.kruise.io/check';
const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
const HEALTHY_LABEL = 'probe-healthy';
/** The sidecar creates /tmp/check when it starts; /tmp/healthy in `main` is created by the test. */
const SIDECAR_COMMAND = ['sh', '-c', 'touch /tmp/check; trap "exit 0" TERM; while true; do sleep 1; done'];
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

function healthyProbe(command = ['test', '-f', '/tmp/healthy']): PodContainerProbe {
  return execProbe({
    name: 'healthy',
    containerName: 'main',
    command,
    podConditionType: HEALTHY,
    markerPolicy: [{ state: 'Succeeded', labels: { [HEALTHY_LABEL]: 'true' } }],
  });
}

const CHECK_PROBE = execProbe({
  name: 'check',
  containerName: 'sidecar',
  command: ['test', '-f', '/tmp/check'],
  podConditionType: CHECK,
  markerPolicy: [
    { state: 'Succeeded', annotations: { [DELETION_COST]: '10' } },
    { state: 'Failed', annotations: { [DELETION_COST]: '-10' } },
  ],
});

describe('custom probes e2e: PodProbeMarker → NodePodProbe → the agent in each node → pod conditions and marks', function () {
  this.timeout(300_000);
  let stack: ProbeStack;

  before(async () => {
    stack = await startProbeStack({ namespacePrefix: 'kd-probe-e2e' });
  });

  after(async () => {
    if (stack) await stack.close();
  });

  const pod = (name: string): Promise<PodObject | undefined> => getPod(stack, name);

  /** Wait until pod `name` shows `check` (re-read every poll); returns the pod. */
  const podShows = (name: string, what: string, check: (p: PodObject) => boolean, timeoutMs?: number) =>
    shows(stack, name, what, check, timeoutMs);

  const healthy = (status: 'True' | 'False') => (p: PodObject) => conditionOf(p, HEALTHY)?.status === status;

  it('gives every node its NodePodProbe', async () => {
    for (const node of stack.nodes) {
      await waitFor(() => getNodePodProbe(stack.client, node.name), {
        ...WAIT,
        message: `NodePodProbe ${node.name}`,
      });
    }
  });

  it('runs a marker’s probe in every selected pod: condition False until the file exists, then True and the label', async () => {
    await createStatefulSet(
      stack,
      statefulSetManifest(stack.namespace, STS, 2, stack.cluster.images.busybox1, [
        { name: 'main' },
        { name: 'sidecar', command: SIDECAR_COMMAND },
      ]),
    );
    const pods = await runningPods(stack, SELECTOR, 2);
    assert.deepEqual(
      pods.map((p) => p.spec?.nodeName).sort(),
      stack.nodes.map((n) => n.name).sort(),
      'one pod on each node',
    );

    await stack.client.create(
      POD_PROBE_MARKERS,
      markerManifest(stack.namespace, 'ppm-healthy', { app: STS }, [healthyProbe()]),
      { namespace: stack.namespace },
    );
    await waitFor(async () => hasCleanupFinalizer(await getMarker(stack, 'ppm-healthy')), {
      ...WAIT,
      message: 'the cleanup finalizer on ppm-healthy',
    });

    for (const p of pods) {
      const entry = await waitFor(() => podProbeEntry(stack.client, p), {
        ...WAIT,
        message: `${p.metadata!.name} in NodePodProbe ${p.spec!.nodeName}`,
      });
      assert.equal(entry.name, p.metadata!.name);
      assert.equal(entry.namespace, stack.namespace);
      assert.equal(entry.IP, p.status!.podIP);
      assert.deepEqual(
        entry.probes?.map((x) => [x.name, x.containerName]),
        [['ppm-healthy#healthy', 'main']],
      );
      // the file is not there yet
      const failed = await podShows(p.metadata!.name!, `${HEALTHY} False`, healthy('False'));
      assert.equal(failed.metadata?.labels?.[HEALTHY_LABEL], undefined, 'no label while the probe fails');
    }

    for (const p of pods) await shIn(stack, p.metadata!.name!, 'main', 'touch /tmp/healthy');
    for (const p of pods) {
      const ok = await podShows(
        p.metadata!.name!,
        `${HEALTHY} True and label ${HEALTHY_LABEL}`,
        (x) => healthy('True')(x) && x.metadata?.labels?.[HEALTHY_LABEL] === 'true',
      );
      assert.equal(conditionOf(ok, CHECK), undefined, 'no condition of a marker not created yet');
      assert.equal(ok.metadata?.annotations?.[POD_PROBE_MARKER_LIST_ANNOTATION], undefined, 'not a serverless pod');
      const events = await eventsFor(stack, p.metadata!.name!, [EVENT_REASON_KRUISE_PROBE_SUCCEEDED]);
      assert.ok(
        events.some((e) => e.involvedObject?.uid === p.metadata!.uid),
        `a ${EVENT_REASON_KRUISE_PROBE_SUCCEEDED} event on ${p.metadata!.name}`,
      );
    }

    const marker = await waitFor(
      async () => {
        const m = await getMarker(stack, 'ppm-healthy');
        return m?.status?.observedGeneration === m?.metadata.generation && m?.status?.matchedPods === 2 ? m : undefined;
      },
      { ...WAIT, message: 'ppm-healthy status: observedGeneration current, matchedPods 2' },
    );
    assert.equal(marker.status?.matchedPods, 2);
    const uids = new Set(pods.map((p) => p.metadata!.uid));
    for (const entry of await podProbesOfNamespace(stack.client, stack.namespace)) {
      assert.ok(uids.has(entry.uid), `NodePodProbe entry ${entry.name} (${entry.uid}) is a pod of the StatefulSet`);
    }
  });

  it('adds a second marker’s probe beside the first: its condition and the annotation of the Succeeded policy', async () => {
    await stack.client.create(
      POD_PROBE_MARKERS,
      markerManifest(stack.namespace, 'ppm-check', { app: STS }, [CHECK_PROBE]),
      { namespace: stack.namespace },
    );
    for (const p of await activePods(stack, SELECTOR)) {
      const shown = await podShows(
        p.metadata!.name!,
        `${CHECK} True and ${DELETION_COST}=10`,
        (x) => conditionOf(x, CHECK)?.status === 'True' && x.metadata?.annotations?.[DELETION_COST] === '10',
      );
      assert.equal(conditionOf(shown, HEALTHY)?.status, 'True', 'the first marker’s condition is kept');
      assert.equal(shown.metadata?.labels?.[HEALTHY_LABEL], 'true');
      const entry = await podProbeEntry(stack.client, shown);
      assert.deepEqual(entry?.probes?.map((x) => x.name).sort(), ['ppm-check#check', 'ppm-healthy#healthy']);
    }
  });

  it('follows the probed files of one pod: False, the label removed, the annotation swapped; then back', async () => {
    const [first, second] = await activePods(stack, SELECTOR);
    const name = first!.metadata!.name!;
    await shIn(stack, name, 'main', 'rm -f /tmp/healthy');
    await shIn(stack, name, 'sidecar', 'rm -f /tmp/check');
    const failed = await podShows(
      name,
      `${HEALTHY} False, ${CHECK} False, no label, ${DELETION_COST}=-10`,
      (x) =>
        healthy('False')(x) &&
        conditionOf(x, CHECK)?.status === 'False' &&
        x.metadata?.labels?.[HEALTHY_LABEL] === undefined &&
        x.metadata?.annotations?.[DELETION_COST] === '-10',
    );
    assert.ok(failed.metadata?.labels?.app, 'the pod’s own labels are kept');
    const other = await pod(second!.metadata!.name!);
    assert.equal(conditionOf(other, HEALTHY)?.status, 'True', 'the other pod is not touched');
    assert.equal(other?.metadata?.annotations?.[DELETION_COST], '10');

    await shIn(stack, name, 'main', 'touch /tmp/healthy');
    await shIn(stack, name, 'sidecar', 'touch /tmp/check');
    await podShows(
      name,
      'both True again, the label back, the annotation 10',
      (x) =>
        healthy('True')(x) &&
        conditionOf(x, CHECK)?.status === 'True' &&
        x.metadata?.labels?.[HEALTHY_LABEL] === 'true' &&
        x.metadata?.annotations?.[DELETION_COST] === '10',
    );
  });

  it('takes a changed probe command from the marker: every pod False, then True again', async () => {
    const setCommand = (command: string[]) =>
      stack.client.patch(
        POD_PROBE_MARKERS,
        'ppm-healthy',
        { spec: { probes: [healthyProbe(command)] } },
        {
          type: 'merge',
          namespace: stack.namespace,
        },
      );
    await setCommand(['sh', '-c', 'echo not today >&2; exit 3']);
    // a changed action first reports Unknown (condition False, no message), then the new command's stderr
    for (const p of await activePods(stack, SELECTOR)) {
      await podShows(
        p.metadata!.name!,
        `${HEALTHY} False with the new command's stderr, label gone`,
        (x) =>
          healthy('False')(x) &&
          conditionOf(x, HEALTHY)?.message === 'not today\n' &&
          x.metadata?.labels?.[HEALTHY_LABEL] === undefined,
      );
    }
    await setCommand(['test', '-f', '/tmp/healthy']);
    for (const p of await activePods(stack, SELECTOR)) {
      await podShows(
        p.metadata!.name!,
        `${HEALTHY} True again`,
        (x) => healthy('True')(x) && x.metadata?.labels?.[HEALTHY_LABEL] === 'true',
      );
    }
  });

  it('starts over in a restarted container: its new filesystem lacks the file, False until it is created again', async () => {
    const [first] = await activePods(stack, SELECTOR);
    const name = first!.metadata!.name!;
    const restartsBefore = first!.status?.containerStatuses?.find((s) => s.name === 'main')?.restartCount ?? 0;
    // PID 1 exits on SIGTERM; kubectl may report the session cut short
    await stack.kubectl.run(['exec', '-n', stack.namespace, name, '-c', 'main', '--', 'kill', '1']);
    await podShows(
      name,
      'main restarted, running again',
      (x) =>
        (x.status?.containerStatuses?.find((s) => s.name === 'main')?.restartCount ?? 0) > restartsBefore &&
        x.status?.containerStatuses?.find((s) => s.name === 'main')?.state?.running !== undefined,
    );
    await podShows(name, `${HEALTHY} False in the new container`, (x) => healthy('False')(x));
    await shIn(stack, name, 'main', 'touch /tmp/healthy');
    await podShows(name, `${HEALTHY} True in the new container`, (x) => healthy('True')(x));
  });

  it('scales down (the removed pod leaves the NodePodProbes) and up (the new pod is probed)', async () => {
    await scaleStatefulSet(stack, STS, 1);
    const [kept] = await runningPods(stack, SELECTOR, 1);
    await waitFor(
      async () => {
        const entries = await podProbesOfNamespace(stack.client, stack.namespace);
        return entries.length === 1 && entries[0]!.uid === kept!.metadata!.uid;
      },
      { ...WAIT, message: 'only the remaining pod in the NodePodProbes' },
    );
    await waitFor(
      async () => {
        const statuses = await probeStatusesOfNamespace(stack.client, stack.namespace);
        return statuses.every((s) => s.uid === kept!.metadata!.uid);
      },
      { ...WAIT, message: 'no NodePodProbe status entry of the removed pod' },
    );
    assert.equal(conditionOf(await pod(kept!.metadata!.name!), HEALTHY)?.status, 'True');

    await scaleStatefulSet(stack, STS, 2);
    const pods = await runningPods(stack, SELECTOR, 2);
    const added = pods.find((p) => p.metadata!.uid !== kept!.metadata!.uid)!;
    const entry = await waitFor(() => podProbeEntry(stack.client, added), {
      ...WAIT,
      message: `the new pod ${added.metadata!.name} in NodePodProbe ${added.spec!.nodeName}`,
    });
    assert.deepEqual(entry.probes?.map((x) => x.name).sort(), ['ppm-check#check', 'ppm-healthy#healthy']);
    await podShows(
      added.metadata!.name!,
      `${CHECK} True and ${DELETION_COST}=10 (the sidecar made its file), ${HEALTHY} False (no file yet)`,
      (x) =>
        conditionOf(x, CHECK)?.status === 'True' &&
        x.metadata?.annotations?.[DELETION_COST] === '10' &&
        healthy('False')(x),
    );
    await shIn(stack, added.metadata!.name!, 'main', 'touch /tmp/healthy');
    await podShows(added.metadata!.name!, `${HEALTHY} True`, healthy('True'));
  });

  it('replaces the entry of a pod recreated under the same name (new uid)', async () => {
    const [first] = await activePods(stack, SELECTOR);
    const name = first!.metadata!.name!;
    const oldUid = first!.metadata!.uid!;
    await stack.client.delete(CoreResources.pods, name, { namespace: stack.namespace, gracePeriodSeconds: 0 });
    const recreated = await podShows(
      name,
      'recreated by the StatefulSet controller (a new uid), running',
      (x) => x.metadata!.uid !== oldUid && x.status?.phase === 'Running' && !!x.status.podIP,
    );
    await waitFor(
      async () => {
        const uids = (await podProbesOfNamespace(stack.client, stack.namespace)).map((e) => e.uid);
        return !uids.includes(oldUid) && uids.includes(recreated.metadata!.uid!);
      },
      { ...WAIT, message: 'the old uid out of the NodePodProbes, the new one in' },
    );
    await runningPods(stack, SELECTOR, 2);
    await shIn(stack, name, 'main', 'touch /tmp/healthy');
    await podShows(
      name,
      'the recreated pod True on both probes',
      (x) => healthy('True')(x) && conditionOf(x, CHECK)?.status === 'True',
    );
  });

  it('deletes the markers: their probes leave every NodePodProbe, the finalizer is removed, the pods are unmarked', async () => {
    const pods = await activePods(stack, SELECTOR);
    await stack.client.delete(POD_PROBE_MARKERS, 'ppm-healthy', { namespace: stack.namespace });
    await waitFor(async () => (await getMarker(stack, 'ppm-healthy')) === undefined, {
      ...WAIT,
      message: 'ppm-healthy gone (its finalizer removed by the controller)',
    });
    await waitFor(
      async () =>
        (await podProbesOfNamespace(stack.client, stack.namespace)).every((e) =>
          (e.probes ?? []).every((x) => !x.name.startsWith('ppm-healthy#')),
        ),
      { ...WAIT, message: 'no ppm-healthy probe left in any NodePodProbe' },
    );
    for (const p of pods) {
      // OpenKruise leaves the last condition and marks on the pod; ours removes them with the marker
      const shown = await podShows(
        p.metadata!.name!,
        `no ${HEALTHY} condition, no ${HEALTHY_LABEL} label; ${CHECK} still True`,
        (x) =>
          conditionOf(x, HEALTHY) === undefined &&
          x.metadata?.labels?.[HEALTHY_LABEL] === undefined &&
          conditionOf(x, CHECK)?.status === 'True',
      );
      assert.equal(shown.metadata?.annotations?.[DELETION_COST], '10', 'the other marker’s annotation is kept');
    }

    await stack.client.delete(POD_PROBE_MARKERS, 'ppm-check', { namespace: stack.namespace });
    await waitFor(async () => (await getMarker(stack, 'ppm-check')) === undefined, {
      ...WAIT,
      message: 'ppm-check gone',
    });
    await waitFor(async () => (await podProbesOfNamespace(stack.client, stack.namespace)).length === 0, {
      ...WAIT,
      message: 'no entry of the namespace left in any NodePodProbe spec',
    });
    await waitFor(async () => (await probeStatusesOfNamespace(stack.client, stack.namespace)).length === 0, {
      ...WAIT,
      message: 'no entry of the namespace left in any NodePodProbe status',
    });
    for (const p of pods) {
      await podShows(
        p.metadata!.name!,
        `no ${CHECK} condition, no ${DELETION_COST} annotation`,
        (x) => conditionOf(x, CHECK) === undefined && x.metadata?.annotations?.[DELETION_COST] === undefined,
      );
    }
  });
});
