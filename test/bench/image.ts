// The kruise-daemon image (test/cluster/image, built with umoci, no Docker engine): its build (warm: from the cache),
// its sizes, and cold starts through the local cluster's containerd: each round removes the image, pulls it from the
// local registry, then times `kruise-daemon --help` (StartContainer to exit) and the agent (StartContainer to
// /healthz answering, and to its runtime check passing) in a fresh pod sandbox.
import { connectRuntime } from '../../src/cri/index.js';
import { ensureImage, imageSizes } from '../cluster/image/build.js';
import { pushImage } from '../cluster/image/component.js';
import { useCluster } from '../support/cluster.js';
import { ImagePod, waitForAnswer, waitForBody } from '../support/image-run.js';
import type { BenchSuite, Figure } from './framework.js';
import { percentile } from './stats.js';

/** Cold starts are seconds each: a few rounds, whatever --iterations says for the fast suites. */
const MAX_ROUNDS = 5;

export const imageSuite: BenchSuite = {
  name: 'image',
  description: 'the image: build (warm), sizes, cold pull and cold start (--help, agent /healthz) through containerd',
  inDefaultRun: false,
  async run({ iterations, log, defer }) {
    const cluster = await useCluster();
    const buildStarted = Date.now();
    const image = await ensureImage({ log });
    const buildMs = Date.now() - buildStarted;
    const sizes = await imageSizes(image.layout, image.tag);
    const ref = await pushImage(image, cluster.registry);
    const client = await connectRuntime({ socket: cluster.runtimeSocket, env: {} });
    defer(() => client.close());
    defer(() => client.removeImage({ image: { image: ref } }).catch(() => undefined));

    const rounds = Math.min(MAX_ROUNDS, iterations);
    const pull: number[] = [];
    const help: number[] = [];
    const healthz: number[] = [];
    const runtimeOk: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round}/${rounds}: remove ${ref}, pull, run`);
      await client.removeImage({ image: { image: ref } }).catch(() => undefined);
      const pullStarted = Date.now();
      await client.pullImage({ image: { image: ref } });
      pull.push(Date.now() - pullStarted);
      const pod = await ImagePod.open(client, cluster, ref, `bench-${round}`);
      try {
        const result = await pod.runToExit('help', { args: ['--help'] });
        if (result.exitCode !== 0) throw new Error(`kruise-daemon --help exited ${result.exitCode}: ${result.out}`);
        help.push(result.ms);
        const agent = await pod.startAgent();
        healthz.push(await waitForAnswer(agent.healthz, agent.startedAt));
        await waitForBody(agent.healthz, '[+]runtime ok');
        runtimeOk.push(Date.now() - agent.startedAt);
        await pod.stop(agent.id);
      } finally {
        await pod.close();
      }
    }
    const note = `n=${rounds}, image ${image.tag}`;
    const mb = (bytes: number): number => Math.round(bytes / 1e5) / 10;
    const figures: Figure[] = [
      { name: 'build.warm', value: buildMs, unit: 'ms', note: image.built ? 'built now (cache was cold)' : 'cached' },
      { name: 'size.compressed', value: mb(sizes.compressedBytes), unit: 'MB', note: 'config + gzip layers' },
      { name: 'size.unpacked', value: mb(sizes.unpackedBytes), unit: 'MB', note: 'layer tars, uncompressed' },
    ];
    for (const [name, samples] of [
      ['pull.cold', pull],
      ['daemonHelp.startToExit', help],
      ['agent.startToHealthzAnswer', healthz],
      ['agent.startToRuntimeOk', runtimeOk],
    ] as const) {
      figures.push({ name: `${name}.p50`, value: percentile(samples, 50), unit: 'ms', note });
      figures.push({ name: `${name}.max`, value: Math.max(...samples), unit: 'ms', note });
    }
    return figures;
  },
};
