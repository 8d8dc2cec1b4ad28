// A realistic image (realistic-image.ts: tens of MB in several layers) pulled through the agent (one NodeImage tag
// -> Succeeded) and directly through CRI (PullImage on the node's containerd, from the host), alternately, ROUNDS
// times each, the image removed from the node before every pull. The direct pulls run beside each agent, so each
// agent's ratio to direct CRI is measured under the same load as its own pulls.
import type { NodeImageStatus } from '../../../src/api/nodeimage.js';
import type { CriClient } from '../../../src/cri/client.js';
import { removeImages } from '../../support/nodeimages.js';
import type { BenchContext } from '../framework.js';
import type { Pair } from '../side-by-side.js';
import { percentile } from '../stats.js';
import { sampleLoad, type AgentUnderTest } from './agents.js';
import { nodeImageRound } from './nodeimage-round.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { LAYER_MIB, LAYERS } from './realistic-image.js';

const ROUNDS = 5;

export interface ImagePulls {
  agent: number[];
  direct: number[];
  /** The pull as the agent logs its duration (its CRI PullImage call, with what it does around it). */
  inAgent: number[];
}

function splitReference(reference: string): { repository: string; tag: string } {
  const at = reference.lastIndexOf(':');
  return { repository: reference.slice(0, at), tag: reference.slice(at + 1) };
}

export async function measureImagePulls(
  context: BenchContext,
  client: KubeClient,
  node: string,
  cri: CriClient,
  reference: string,
  agent: AgentUnderTest,
): Promise<ImagePulls> {
  const { repository, tag } = splitReference(reference);
  const pulls: ImagePulls = { agent: [], direct: [], inAgent: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    await removeImages(cri, [reference]);
    const started = performance.now();
    await cri.pullImage({ image: { image: reference } }, { timeoutMs: 300_000 });
    pulls.direct.push(performance.now() - started);

    const done = (s: NodeImageStatus): boolean =>
      s.imageStatuses?.[repository]?.tags.some(
        (t) => t.tag === tag && t.version === round && t.phase === 'Succeeded',
      ) ?? false;
    const spec = {
      images: {
        [repository]: { tags: [{ tag, version: round, pullPolicy: { timeoutSeconds: 300, backoffLimit: 0 } }] },
      },
    };
    pulls.agent.push(await nodeImageRound(client, cri, node, agent.side, [reference], spec, done));
    const logged = agent.lastPullMs();
    if (logged === undefined) throw new Error(`${agent.side}: no pull duration in its log`);
    pulls.inAgent.push(logged);
    context.log(
      `${agent.side}: realistic image round ${round}: direct CRI ${Math.round(pulls.direct.at(-1)!)} ms, ` +
        `through the agent ${Math.round(pulls.agent.at(-1)!)} ms (its pull ${Math.round(pulls.inAgent.at(-1)!)} ms)`,
    );
  }
  sampleLoad();
  await removeImages(cri, [reference]);
  return pulls;
}

export function imagePullPairs(ours: ImagePulls, theirs: ImagePulls): Pair[] {
  const median = (samples: number[]): number => percentile(samples, 50);
  const rounds = (s: number[]): string => s.map(Math.round).join(', ');
  const what = `${LAYERS} layers of ${LAYER_MIB} MiB + busybox, removed before each pull, median of ${ROUNDS}`;
  return [
    {
      name: 'image.pull',
      unit: 'ms',
      ours: median(ours.agent),
      theirs: median(theirs.agent),
      note: `NodeImage tag written -> Succeeded; ${what}; ours ${rounds(ours.agent)}; OpenKruise ${rounds(theirs.agent)}`,
    },
    {
      name: 'image.pull.inAgent',
      unit: 'ms',
      ours: median(ours.inAgent),
      theirs: median(theirs.inAgent),
      note: `the pull as the agent logs it (ours 'image pulled' ms, its 'Successfully pull image' cost); ours ${rounds(ours.inAgent)}; OpenKruise ${rounds(theirs.inAgent)}`,
    },
    {
      name: 'image.direct',
      unit: 'ms',
      ours: median(ours.direct),
      theirs: median(theirs.direct),
      note: `CRI PullImage from the host, alternating with each agent's pulls; ours ${rounds(ours.direct)}; OpenKruise ${rounds(theirs.direct)}`,
    },
    {
      name: 'image.pull/direct',
      unit: 'x',
      ours: median(ours.agent) / median(ours.direct),
      theirs: median(theirs.agent) / median(theirs.direct),
      note: 'each agent against direct CRI beside it (limit 1.00)',
    },
  ];
}
