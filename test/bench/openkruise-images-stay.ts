// `npm run bench -- openkruise-images-stay`: do pre-pulled images stay, does the NodeImage tell the truth, and do
// pre-pulls slow kubelet's own pulls: our agent beside OpenKruise's kruise-daemon v1.9.1, one at a time on the same
// node of the real local cluster (openkruise/agents.ts), the NodeImage spec written by the bench (no job controller):
// - stays: kubelet restarted with imageMaximumGCAge 30s (imageMinimumGCAge 10s; KEP-4210), a fresh image pre-pulled;
//   after 10 x imageMaximumGCAge (and past kubelet's first image GC, 5 min after its start: its period is fixed),
//   is it still on the node (1/0), and how long did the NodeImage say Succeeded while it was gone;
// - truth: a pre-pulled image removed by hand (CRI RemoveImage, as `crictl rmi`): seconds the NodeImage says
//   Succeeded while the image is not on the node, within a minute (60 = never corrected);
// - kubelet first: a pod whose image kubelet must pull, from its creation to Running, on an idle node and while the
//   agent pre-pulls four large images (four layers each) put into the spec just before (ratio busy/idle; goal 1.10
//   for ours; the median of KUBELET_FIRST_RUNS rounds, default 3), what that costs the pre-pulls (spec write to all
//   four Succeeded), and the NodeImage writes per pulled tag meanwhile (status changes seen on a watch, progress
//   included).
// IMAGES_STAY_PARTS=stays,truth,kubelet-first (default all) runs only those parts.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_IMAGES, type NodeImageSpec, type NodeImageStatus } from '../../src/api/nodeimage.js';
import type { CriClient } from '../../src/cri/client.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CoreResources } from '../../src/kube/resource.js';
import type { NodeLayout } from '../cluster/k8s/layout.js';
import { getNodeImage, removeImages, setNodeImageSpec, tagStatusOf } from '../support/nodeimages.js';
import { restartKubelet } from '../support/own-cluster.js';
import type { RealCluster } from '../support/real-cluster.js';
import { freshNamespace, removeNamespace } from '../support/real-images.js';
import { pushUniqueImage } from '../support/unique-image.js';
import { waitFor } from '../support/wait.js';
import type { BenchSuite, BenchContext, Figure } from './framework.js';
import { eachAgent, loads, sampleLoad, sleep, type AgentUnderTest } from './openkruise/agents.js';
import { emptyNodeImage } from './openkruise/nodeimage-round.js';
import { openKruiseOnFirstNode } from './openkruise/first-node.js';
import { markdownTable, sideBySide, type Pair } from './side-by-side.js';

const MAX_GC_AGE_S = 30;
/** kubelet's image GC period (a constant in kubelet): its first GC runs this long after its start. */
const KUBELET_GC_PERIOD_MS = 5 * 60_000;
const TRUTH_WINDOW_S = 60;
const MiB = 1024 * 1024;
const PRE_PULLS = 4;
const PRE_PULL_LAYERS = 4;
const PRE_PULL_LAYER_MIB = 30;
const POD_IMAGE_MIB = 40;
const PARTS = ['stays', 'truth', 'kubelet-first'] as const;
type Part = (typeof PARTS)[number];
const NS = 'bench-images-stay';

interface KubeletFirstRound {
  podIdleMs: number;
  podBusyMs: number;
  prePullsMs: number;
  writesPerTag: number;
  /** Running pre-pulls paused for the pod's pull. */
  paused: number;
}

interface SideFigures {
  staysPresent?: number;
  staysSucceededWhileGoneS?: number;
  truthSucceededWhileGoneS?: number;
  kubeletFirst: KubeletFirstRound[];
}

function partsToRun(env: NodeJS.ProcessEnv = process.env): Set<Part> {
  const asked = (env.IMAGES_STAY_PARTS ?? PARTS.join(','))
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const unknown = asked.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new Error(`IMAGES_STAY_PARTS: unknown part(s) ${unknown.join(', ')}; known: ${PARTS.join(', ')}`);
  return new Set(asked as Part[]);
}

function kubeletFirstRuns(env: NodeJS.ProcessEnv = process.env): number {
  const runs = Number(env.KUBELET_FIRST_RUNS ?? 3);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`KUBELET_FIRST_RUNS must be a whole number ≥ 1, not ${env.KUBELET_FIRST_RUNS}`);
  return runs;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface PodObject extends KubeObject {
  status?: { phase?: string };
}

function split(ref: string): { image: string; tag: string } {
  const at = ref.lastIndexOf(':');
  return { image: ref.slice(0, at), tag: ref.slice(at + 1) };
}

function specOf(refs: readonly string[]): NodeImageSpec {
  const images: NonNullable<NodeImageSpec['images']> = {};
  for (const ref of refs) {
    const { image, tag } = split(ref);
    images[image] = { tags: [{ tag, version: 0, pullPolicy: { timeoutSeconds: 300, backoffLimit: 1 } }] };
  }
  return { images };
}

const succeeded = (status: NodeImageStatus | undefined, ref: string): boolean => {
  const { image, tag } = split(ref);
  return status !== undefined && tagStatusOf(status, image, tag)?.phase === 'Succeeded';
};

async function push(cluster: RealCluster, name: string, mib: number, layers = 1): Promise<string> {
  const image = await pushUniqueImage(
    cluster.registry,
    `bench/${name}-${randomBytes(3).toString('hex')}`,
    'v1',
    mib * MiB,
    layers,
  );
  return `${image.imageName}:${image.tag}`;
}

/** Sample every `everyMs` for `windowMs`: seconds during which the NodeImage said Succeeded and the image was gone. */
async function succeededWhileGone(
  client: KubeClient,
  cri: CriClient,
  node: string,
  ref: string,
  windowMs: number,
  everyMs: number,
): Promise<{ seconds: number; presentAtEnd: boolean }> {
  const end = Date.now() + windowMs;
  let seconds = 0;
  let present = true;
  while (Date.now() < end) {
    present = (await cri.imageStatus({ image: { image: ref } })).image !== null;
    if (!present && succeeded((await getNodeImage(client, node))?.status, ref)) seconds += everyMs / 1000;
    await sleep(everyMs);
  }
  return { seconds, presentAtEnd: present };
}

/**
 * ms from the pod's creation to the end of its Pending phase: kubelet pulls its image (nobody else has it), then
 * starts the container, whose command (the image's one file, random bytes) cannot run, so the pod is Failed at once;
 * the time is kubelet's pull and a container start.
 */
async function podStart(client: KubeClient, node: string, image: string, name: string): Promise<number> {
  const t0 = performance.now();
  await client.create(
    CoreResources.pods,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 0,
        // the image holds one file of random bytes: the container only has to start, the sandbox keeps it Running
        containers: [{ name: 'c', image, command: ['/random.bin'] }],
        restartPolicy: 'Never',
      },
    },
    { namespace: NS },
  );
  await waitFor(
    async () => {
      const pod = await client.get<PodObject>(CoreResources.pods, name, { namespace: NS });
      return pod.status?.phase !== undefined && pod.status.phase !== 'Pending';
    },
    { timeoutMs: 300_000, intervalMs: 100, message: `pod ${name} past Pending` },
  );
  return performance.now() - t0;
}

async function measure(
  context: BenchContext,
  cluster: RealCluster,
  node: NodeLayout,
  cri: CriClient,
  agent: AgentUnderTest,
  parts: ReadonlySet<Part>,
): Promise<SideFigures> {
  const { log } = context;
  const client = cluster.admin;
  const side = agent.side;
  const figures: SideFigures = { kubeletFirst: [] };

  if (parts.has('stays')) {
    // stays: kubelet with a maximum image age of 30 s, restarted now so its first GC runs in 5 minutes
    const dropIn = join(cluster.dir, 'bench-gc-age.d');
    mkdirSync(dropIn, { recursive: true });
    writeFileSync(
      join(dropIn, '50-gc-age.conf'),
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimageMinimumGCAge: 10s\nimageMaximumGCAge: ${MAX_GC_AGE_S}s\n`,
    );
    context.defer(() => restartKubelet(cluster, node, []).then(() => undefined));
    const restartedAt = Date.now();
    await restartKubelet(cluster, node, [`--config-dir=${dropIn}`]);
    const stays = await push(cluster, `stays-${side}`, 2);
    await emptyNodeImage(client, node.name, side);
    await setNodeImageSpec(client, node.name, specOf([stays]));
    await waitFor(async () => succeeded((await getNodeImage(client, node.name))?.status, stays), {
      timeoutMs: 120_000,
      message: `${side}: ${stays} Succeeded`,
    });
    const windowMs = Math.max(10 * MAX_GC_AGE_S * 1000, KUBELET_GC_PERIOD_MS + 30_000) - (Date.now() - restartedAt);
    log(`${side}: ${stays} Succeeded; watching it through kubelet's image GC for ${Math.round(windowMs / 1000)} s`);
    const stay = await succeededWhileGone(client, cri, node.name, stays, windowMs, 2_000);
    log(`${side}: present at the end: ${stay.presentAtEnd}; Succeeded while gone: ${stay.seconds} s`);
    await restartKubelet(cluster, node, []);
    await emptyNodeImage(client, node.name, side);
    await removeImages(cri, [stays]);
    figures.staysPresent = stay.presentAtEnd ? 1 : 0;
    figures.staysSucceededWhileGoneS = stay.seconds;
  }

  if (parts.has('truth')) {
    // truth: removed by hand
    const truth = await push(cluster, `truth-${side}`, 2);
    await setNodeImageSpec(client, node.name, specOf([truth]));
    await waitFor(async () => succeeded((await getNodeImage(client, node.name))?.status, truth), {
      timeoutMs: 120_000,
      message: `${side}: ${truth} Succeeded`,
    });
    await removeImages(cri, [truth]);
    const told = await succeededWhileGone(client, cri, node.name, truth, TRUTH_WINDOW_S * 1000, 500);
    log(`${side}: removed by hand; Succeeded while gone ${told.seconds} s of ${TRUTH_WINDOW_S}`);
    await emptyNodeImage(client, node.name, side);
    await removeImages(cri, [truth]);
    figures.truthSucceededWhileGoneS = told.seconds;
  }

  if (parts.has('kubelet-first')) {
    const runs = kubeletFirstRuns();
    for (let round = 1; round <= runs; round++) {
      const result = await kubeletFirstRound(context, cluster, node, cri, agent, round);
      log(
        `${side}: round ${round}/${runs}: pod start idle ${Math.round(result.podIdleMs)} ms, during pre-pulls ` +
          `${Math.round(result.podBusyMs)} ms (${(result.podBusyMs / result.podIdleMs).toFixed(2)}x); pre-pulls done in ` +
          `${Math.round(result.prePullsMs)} ms, ${result.paused} paused for kubelet; ${result.writesPerTag} status writes per tag`,
      );
      figures.kubeletFirst.push(result);
    }
  }
  return figures;
}

/** A pod's pull on the idle node, then while four large pre-pulls go on (put in the spec half a second before). */
async function kubeletFirstRound(
  context: BenchContext,
  cluster: RealCluster,
  node: NodeLayout,
  cri: CriClient,
  agent: AgentUnderTest,
  round: number,
): Promise<KubeletFirstRound> {
  const client = cluster.admin;
  const side = agent.side;
  const pausedBefore = agent.pausedPulls();
  await emptyNodeImage(client, node.name, side);
  await freshNamespace(client, NS);
  const idleImage = await push(cluster, `pod-idle-${side}-${round}`, POD_IMAGE_MIB);
  const podIdleMs = await podStart(client, node.name, idleImage, `idle-${side}-${round}`);
  const preImages: string[] = [];
  for (let i = 0; i < PRE_PULLS; i++) {
    preImages.push(await push(cluster, `pre-${side}-${round}-${i}`, PRE_PULL_LAYER_MIB, PRE_PULL_LAYERS));
  }
  const busyImage = await push(cluster, `pod-busy-${side}-${round}`, POD_IMAGE_MIB);
  let writes = 0;
  const stream = await client.watch<KubeObject & { status?: NodeImageStatus }>(NODE_IMAGES, {
    fieldSelector: `metadata.name=${node.name}`,
  });
  let lastStatus = '';
  void (async () => {
    for await (const event of stream) {
      const status = JSON.stringify(event.object.status ?? {});
      if (event.type === 'MODIFIED' && status !== lastStatus) writes++;
      lastStatus = status;
    }
  })().catch(() => undefined);
  const specAt = performance.now();
  await setNodeImageSpec(client, node.name, specOf(preImages));
  await sleep(500);
  const podBusyMs = await podStart(client, node.name, busyImage, `busy-${side}-${round}`);
  await waitFor(
    async () => {
      const status = (await getNodeImage(client, node.name))?.status;
      return preImages.every((ref) => succeeded(status, ref));
    },
    { timeoutMs: 600_000, intervalMs: 250, message: `${side}: the ${PRE_PULLS} pre-pulls Succeeded` },
  );
  const prePullsMs = performance.now() - specAt;
  await sleep(2_000);
  stream.close();
  await removeNamespace(client, NS);
  await emptyNodeImage(client, node.name, side);
  await removeImages(cri, [idleImage, busyImage, ...preImages]);
  context.log(`${side}: round ${round} done`);
  return {
    podIdleMs,
    podBusyMs,
    prePullsMs,
    writesPerTag: writes / PRE_PULLS,
    paused: agent.pausedPulls() - pausedBefore,
  };
}

export const openKruiseImagesStaySuite: BenchSuite = {
  name: 'openkruise-images-stay',
  description:
    "ours vs OpenKruise's kruise-daemon: a pre-pulled image through kubelet's GC by age, the status after an image is removed, a pod's pull while the node pre-pulls",
  inDefaultRun: false,
  async run(context) {
    loads.length = 0;
    sampleLoad();
    const parts = partsToRun();
    const { build, cluster, node, cri } = await openKruiseOnFirstNode(context);
    const { ours, theirs } = await eachAgent(context, cluster, node, build, (agent) =>
      measure(context, cluster, node, cri, agent, parts),
    );
    sampleLoad();
    const pairs: Pair[] = [];
    if (parts.has('stays')) {
      pairs.push(
        {
          name: 'stays.present-after-10x-max-gc-age',
          unit: '1/0',
          ours: ours.staysPresent ?? 0,
          theirs: theirs.staysPresent ?? 0,
          note: `kubelet imageMaximumGCAge ${MAX_GC_AGE_S}s, through its first image GC`,
        },
        {
          name: 'stays.succeeded-while-gone',
          unit: 's',
          ours: ours.staysSucceededWhileGoneS ?? 0,
          theirs: theirs.staysSucceededWhileGoneS ?? 0,
        },
      );
    }
    if (parts.has('truth')) {
      pairs.push({
        name: 'truth.succeeded-while-gone',
        unit: 's',
        ours: ours.truthSucceededWhileGoneS ?? 0,
        theirs: theirs.truthSucceededWhileGoneS ?? 0,
        note: `image removed by hand; ${TRUTH_WINDOW_S} = never corrected within the window`,
      });
    }
    if (parts.has('kubelet-first')) {
      const of = (side: SideFigures, pick: (r: KubeletFirstRound) => number) => side.kubeletFirst.map(pick);
      const ratios = (side: SideFigures) => of(side, (r) => r.podBusyMs / r.podIdleMs);
      const shown = (values: number[], digits: number) => values.map((v) => v.toFixed(digits)).join(', ');
      const rounds = ours.kubeletFirst.length;
      pairs.push(
        {
          name: 'kubelet-pull.slowdown',
          unit: 'x',
          ours: median(ratios(ours)),
          theirs: median(ratios(theirs)),
          note:
            `pod start with its ${POD_IMAGE_MIB} MiB image pulled by kubelet, during ${PRE_PULLS} pre-pulls of ` +
            `${PRE_PULL_LAYERS} x ${PRE_PULL_LAYER_MIB} MiB / idle; median of ${rounds}: ours ${shown(ratios(ours), 2)}, ` +
            `theirs ${shown(ratios(theirs), 2)}`,
        },
        {
          name: 'kubelet-pull.idle',
          unit: 'ms',
          ours: median(of(ours, (r) => r.podIdleMs)),
          theirs: median(of(theirs, (r) => r.podIdleMs)),
        },
        {
          name: 'kubelet-pull.during-pre-pulls',
          unit: 'ms',
          ours: median(of(ours, (r) => r.podBusyMs)),
          theirs: median(of(theirs, (r) => r.podBusyMs)),
        },
        {
          name: 'pre-pulls.done',
          unit: 'ms',
          ours: median(of(ours, (r) => r.prePullsMs)),
          theirs: median(of(theirs, (r) => r.prePullsMs)),
          note: `spec write to all ${PRE_PULLS} Succeeded, a pod's pull in between: what yielding to kubelet costs`,
        },
        {
          name: 'pre-pulls.paused-for-kubelet',
          unit: 'pulls',
          ours: median(of(ours, (r) => r.paused)),
          theirs: median(of(theirs, (r) => r.paused)),
          note: 'running pre-pulls cancelled when the pod came and resumed under their lease',
        },
        {
          name: 'nodeimage.writes-per-tag',
          unit: 'writes',
          ours: median(of(ours, (r) => r.writesPerTag)),
          theirs: median(of(theirs, (r) => r.writesPerTag)),
          note: 'status changes on a watch while the pre-pulls ran, progress included',
        },
      );
    }
    const load = `load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}`;
    context.log(`side by side on ${node.name} (${load}):\n${markdownTable(pairs)}`);
    const figures: Figure[] = pairs.flatMap(sideBySide);
    figures.push({ name: 'machine.load1.max', value: Math.max(...loads), unit: 'load', note: load });
    return figures;
  },
};
