// CRI latencies through our CriClient against the local cluster's real containerd: p50/p99 of Version,
// ListImages, ImageStatus and PullImage of an image that is already present.
import { connectRuntime } from '../../src/cri/index.js';
import { createRegistry } from '../../src/observability/metrics.js';
import { useCluster } from '../support/cluster.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile, timeEach } from './stats.js';

const WARMUP = 5;

export const criLatencySuite: BenchSuite = {
  name: 'cri',
  description: 'p50/p99 of CRI Version, ListImages, ImageStatus, PullImage (present image) against containerd',
  inDefaultRun: true,
  async run({ iterations, log, defer }) {
    const cluster = await useCluster();
    const image = cluster.images.busybox1;
    const client = await connectRuntime({ socket: cluster.runtimeSocket, registry: createRegistry() });
    defer(() => client.close());

    log(`pulling ${image} once so it is present`);
    await client.pullImage({ image: { image } });

    const pullIterations = Math.max(5, Math.round(iterations / 4));
    const operations: Array<[string, number, () => Promise<unknown>]> = [
      ['Version', iterations, () => client.version()],
      ['ListImages', iterations, () => client.listImages()],
      ['ImageStatus', iterations, () => client.imageStatus({ image: { image } })],
      ['PullImage(present)', pullIterations, () => client.pullImage({ image: { image } })],
    ];
    const figures: Figure[] = [];
    for (const [name, n, operation] of operations) {
      await timeEach(WARMUP, operation);
      log(`${name} x${n}`);
      const samples = await timeEach(n, operation);
      const note = `n=${n}`;
      figures.push({ name: `${name}.p50`, value: percentile(samples, 50), unit: 'ms', note });
      figures.push({ name: `${name}.p99`, value: percentile(samples, 99), unit: 'ms', note });
    }
    return figures;
  },
};
