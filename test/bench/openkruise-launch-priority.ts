// `npm run bench -- openkruise-launch-priority`: container launch priority side by side on the real local cluster,
// the same pods on the same node (kd-node-1, its real kubelet), one system at a time:
// - ours: kruise-controller's pod webhook injects the barrier, our agent in the node writes each next key and touches
//   the pod so kubelet starts the released container at once (ADR 0002);
// - OpenKruise's: its own kruise-manager v1.9.1 (built here; test/cluster/openkruise/manager-process.ts) with its
//   webhooks and its container-launch-priority controller, which writes the next key once the pod's status shows the
//   level above ready; nothing touches the pod, so a container kubelet found blocked waits for kubelet's own retry.
// Figures, for both and as ours/openkruise: pod created -> every container ready, p50 and max over RUNS runs, for a
// 3-level pod (priorities 10/0/-5) without probes and with readiness probes (period 1 s) on the upper two levels.
import { CoreResources } from '../../src/kube/resource.js';
import type { WatchStream } from '../../src/kube/watch-stream.js';
import { OpenKruiseManagerProcess } from '../cluster/openkruise/manager-process.js';
import { openKruiseBuild } from '../cluster/openkruise/openkruise.js';
import {
  allReady,
  deletePods,
  podManifest,
  startLaunchStack,
  type ContainerDef,
  type LaunchStack,
  type PodObject,
} from '../e2e/launchpriority/stack.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, Figure } from './framework.js';
import { markdownTable, sideBySide, type Pair } from './side-by-side.js';
import { percentile } from './stats.js';

const RUNS = 5;
const LEVELS: ContainerDef[] = [
  { name: 'top', priority: '10' },
  { name: 'middle', priority: '0' },
  { name: 'bottom', priority: '-5' },
];
/** The same levels, the upper two with a readiness probe (readiness then reaches the releaser through the status). */
const PROBED: ContainerDef[] = LEVELS.map((c) => ({ ...c, probed: c.name !== 'bottom' }));
const READY_WITHIN_MS = 120_000;

/** created -> all ready (ms) of each run, for the plain and the probed pod. */
interface StartTimes {
  plain: number[];
  probed: number[];
}

/**
 * Creates the pods one at a time on the stack's node and times each from its creation to every container ready (seen
 * on a pod watch); `side` names them apart. Checks the barrier was injected (the pod has a `<pod>-barrier` ConfigMap
 * reference), so a system whose webhook did not act is not timed as if it had.
 */
async function timeStarts(stack: LaunchStack, side: string, log: (m: string) => void): Promise<StartTimes> {
  const readyAt = new Map<string, number>();
  const stream: WatchStream<PodObject> = await stack.client.watch<PodObject>(CoreResources.pods, {
    namespace: stack.namespace,
  });
  void (async () => {
    for await (const event of stream) {
      const name = event.object.metadata?.name ?? '';
      if (event.type !== 'DELETED' && allReady(event.object) && !readyAt.has(name))
        readyAt.set(name, performance.now());
    }
  })().catch(() => undefined);
  try {
    const once = async (name: string, containers: ContainerDef[]): Promise<number> => {
      const t0 = performance.now();
      const pod = await stack.client.create<PodObject>(
        CoreResources.pods,
        podManifest(stack.node.name, containers, { name }, stack.cluster.images.busybox1),
        { namespace: stack.namespace },
      );
      if (!JSON.stringify(pod.spec?.containers ?? []).includes(`${name}-barrier`)) {
        throw new Error(`${side}: pod ${name} was admitted without a barrier: the webhook did not inject it`);
      }
      await waitFor(() => readyAt.has(name), { timeoutMs: READY_WITHIN_MS, message: `${side}: pod ${name} all ready` });
      const ms = readyAt.get(name)! - t0;
      await deletePods(stack, [name]);
      return ms;
    };
    const run = Date.now().toString(36);
    await once(`oklp-${side}-warm-${run}`, LEVELS); // image present, informers and connections up
    const times: StartTimes = { plain: [], probed: [] };
    for (let i = 0; i < RUNS; i++) {
      times.plain.push(await once(`oklp-${side}-plain-${i}-${run}`, LEVELS));
      times.probed.push(await once(`oklp-${side}-probed-${i}-${run}`, PROBED));
      log(`  ${side} run ${i + 1}: plain ${Math.round(times.plain[i]!)} ms, probed ${Math.round(times.probed[i]!)} ms`);
    }
    return times;
  } finally {
    stream.close();
  }
}

export const openKruiseLaunchPrioritySuite: BenchSuite = {
  name: 'openkruise-launch-priority',
  description:
    "3-level pod created -> all ready, with and without readiness probes: our webhook and agent vs OpenKruise's kruise-manager",
  inDefaultRun: false,
  async run({ log, defer }) {
    const build = await openKruiseBuild(log);
    const stack = await startLaunchStack({ namespacePrefix: 'kd-oklp-bench' });
    defer(() => stack.close());

    log(`ours: kruise-controller's webhook, our agent on ${stack.node.name}; ${RUNS} runs of each pod`);
    const ours = await timeStarts(stack, 'ours', log);
    await stack.system.stop();

    log('OpenKruise: its kruise-manager (webhooks, container-launch-priority controller), no agent of ours');
    const manager = await OpenKruiseManagerProcess.start({ build, layout: stack.cluster.layout });
    defer(() => manager.stop()); // before the stack's close (last registered, first run)
    await waitFor(() => manager.ready(), { timeoutMs: 180_000, message: "OpenKruise's kruise-manager ready" });
    const theirs = await timeStarts(stack, 'openkruise', log);

    const r = (ms: number): number => Math.round(ms);
    const pairs: Pair[] = [
      {
        name: 'launchPriority.start3levels.p50',
        unit: 'ms',
        ours: r(percentile(ours.plain, 50)),
        theirs: r(percentile(theirs.plain, 50)),
        note: `pod created -> all 3 containers ready (priorities 10/0/-5, no probes), ${RUNS} runs`,
      },
      {
        name: 'launchPriority.start3levels.max',
        unit: 'ms',
        ours: r(Math.max(...ours.plain)),
        theirs: r(Math.max(...theirs.plain)),
      },
      {
        name: 'launchPriority.probed3levels.p50',
        unit: 'ms',
        ours: r(percentile(ours.probed, 50)),
        theirs: r(percentile(theirs.probed, 50)),
        note: 'the same pod, top and middle with a readiness probe (period 1 s)',
      },
      {
        name: 'launchPriority.probed3levels.max',
        unit: 'ms',
        ours: r(Math.max(...ours.probed)),
        theirs: r(Math.max(...theirs.probed)),
      },
    ];
    log(`\n${markdownTable(pairs)}\n`);
    const figures: Figure[] = pairs.flatMap(sideBySide);
    return figures;
  },
};
