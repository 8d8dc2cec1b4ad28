// `npm run bench -- openkruise`: our agent beside OpenKruise's own kruise-daemon (v1.9.1, built here by
// test/cluster/k8s/build.sh openkruise), the same workload on the same node of the real local cluster, one agent at
// a time (ours, then OpenKruise's; never both on the node at once), in two halves:
// 1. the node without the bench's pods (openkruise/idle-and-tags.ts, openkruise/image-pull.ts): ready, steady state
//    (CPU, API requests, idle RSS; 2 min, `--long` 10 min), 20 NodeImage tags, and a realistic image
//    (openkruise/realistic-image.ts) through each agent against direct CRI;
// 2. the node full, 110 pods (openkruise/full-node.ts): RSS, 100 CRRs (openkruise/crr.ts) and env-from-metadata
//    restarts (openkruise/env-restart.ts).
// Each figure is printed for both and as ours/openkruise, then as a Markdown table (docs/openkruise-side-by-side.md).
// OPENKRUISE_BENCH_PARTS=idle,image,full picks halves/parts (default: all; for working on one figure).
import { NODE_IMAGES } from '../../src/api/nodeimage.js';
import { getNodeImage } from '../support/nodeimages.js';
import { openKruiseOnFirstNode } from './openkruise/first-node.js';
import type { BenchSuite, Figure } from './framework.js';
import { pushBenchTags } from './imagepuller.js';
import { eachAgent, loads, PARALLEL_PULLS, sampleLoad } from './openkruise/agents.js';
import { countAgentRequests } from './openkruise/api-requests.js';
import { watchContainerExits } from './openkruise/container-exits.js';
import { crrPairs, measureCrrs } from './openkruise/crr.js';
import { envRestartPairs, measureEnvRestarts } from './openkruise/env-restart.js';
import { fillNode, MAX_PODS, rssWithPods, withoutBenchPods } from './openkruise/full-node.js';
import { benchTags, idleAndTagsPairs, measureIdleAndTags, steadyWindowMs } from './openkruise/idle-and-tags.js';
import { imagePullPairs, measureImagePulls } from './openkruise/image-pull.js';
import { realisticImage } from './openkruise/realistic-image.js';
import { markdownTable, sideBySide, type Pair } from './side-by-side.js';

const PARTS = ['idle', 'image', 'full'] as const;

function chosenParts(env: NodeJS.ProcessEnv = process.env): Set<string> {
  const named = (env.OPENKRUISE_BENCH_PARTS ?? '').split(',').filter(Boolean);
  const unknown = named.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0)
    throw new Error(`OPENKRUISE_BENCH_PARTS: unknown ${unknown.join(', ')} (known: ${PARTS.join(', ')})`);
  return new Set(named.length > 0 ? named : PARTS);
}

export const openKruiseSuite: BenchSuite = {
  name: 'openkruise',
  description:
    "ours vs OpenKruise's kruise-daemon on one real node: NodeImage tags, a realistic image vs CRI, 100 CRRs, env restarts, RSS idle and with 110 pods, CPU and API requests",
  inDefaultRun: false,
  async run(context) {
    const { log } = context;
    const parts = chosenParts();
    loads.length = 0;
    sampleLoad();
    const { build, cluster, node, client, cri } = await openKruiseOnFirstNode(context);

    const repository = `${cluster.registry}/bench/busybox`;
    await pushBenchTags(context, cluster, repository, benchTags());
    const image = parts.has('image') ? await realisticImage(cluster, log) : '';
    countAgentRequests(context, cluster);
    const nodeImageBefore = await getNodeImage(client, node.name);
    context.defer(async () => {
      if (!nodeImageBefore) await client.delete(NODE_IMAGES, node.name).catch(() => undefined);
    });

    const pairs: Pair[] = [];
    if (parts.has('idle') || parts.has('image')) {
      await withoutBenchPods(context, cluster);
      const first = await eachAgent(context, cluster, node, build, async (agent) => ({
        idle: parts.has('idle')
          ? await measureIdleAndTags(context, cluster, node.name, cri, repository, agent)
          : undefined,
        image: parts.has('image') ? await measureImagePulls(context, client, node.name, cri, image, agent) : undefined,
      }));
      const { ours, theirs } = first;
      if (ours.idle && theirs.idle) pairs.push(...idleAndTagsPairs(context, ours.idle, theirs.idle, PARALLEL_PULLS));
      if (ours.image && theirs.image) pairs.push(...imagePullPairs(ours.image, theirs.image));
    }
    if (parts.has('full')) {
      await fillNode(context, cluster, node.name);
      const exits = await watchContainerExits(node.hostPaths.runtimeSocket);
      context.defer(() => exits.stop());
      const full = await eachAgent(context, cluster, node, build, async (agent) => ({
        rss: await rssWithPods(context, agent),
        crr: await measureCrrs(context, client, exits, node.name, agent),
        env: await measureEnvRestarts(context, client, cri, exits, agent),
      }));
      pairs.push(
        {
          name: `rss.${MAX_PODS}pods`,
          unit: 'MiB',
          ours: full.ours.rss,
          theirs: full.theirs.rss,
          note: `${MAX_PODS} pods running on the node, 20 s after ready`,
        },
        ...crrPairs(full.ours.crr, full.theirs.crr),
        ...envRestartPairs(full.ours.env, full.theirs.env),
      );
    }

    sampleLoad();
    const windowMin = steadyWindowMs(context) / 60_000;
    const load = `load average (1 min) ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}`;
    log(`side by side on ${node.name} (${windowMin} min steady state; ${load}):\n${markdownTable(pairs)}`);
    const figures: Figure[] = pairs.flatMap(sideBySide);
    figures.push({ name: 'machine.load1.max', value: Math.max(...loads), unit: 'load', note: load });
    return figures;
  },
};
