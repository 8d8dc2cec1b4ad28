// A realistic image for the side-by-side pull figure: the busybox test image's layer (from the cluster's OCI layout,
// test/cluster/runtime/test-images.ts) plus LAYERS layers of LAYER_MIB MiB of incompressible bytes each (a
// deterministic AES-CTR stream: gzip cannot shrink it, as with real binaries). Built with umoci into
// $KD_CACHE/images/bench-realistic-v<RECIPE>/ (built once per recipe version: a warm run builds nothing) and pushed
// to the cluster's registry unless it already holds exactly that manifest.
import { createCipheriv } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { cacheDir } from '../../cluster/k8s/binaries.js';
import { clusterPaths } from '../../cluster/paths.js';
import { runChecked } from '../../cluster/runtime/exec.js';
import { layoutDigests, push, registryDigest, TEST_IMAGES } from '../../cluster/runtime/test-images.js';
import type { RealCluster } from '../../support/real-cluster.js';

/** Bump when the recipe changes: a new layout is built (the old one stays until the cache is cleaned). */
const RECIPE = 1;
export const LAYERS = 5;
export const LAYER_MIB = 8;
const LAYOUT_TAG = 'realistic';
const REPOSITORY = 'bench/realistic';
const TAG = `v${RECIPE}`;

function layoutDir(): string {
  return join(cacheDir(), 'images', `bench-realistic-v${RECIPE}`, 'oci');
}

/** `bytes` of a deterministic stream that gzip cannot compress (AES-128-CTR of zeros, keyed by `seed`). */
async function writeIncompressible(file: string, bytes: number, seed: number): Promise<void> {
  const key = Buffer.alloc(16, seed);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  const chunk = Buffer.alloc(1 << 20);
  function* stream(): Generator<Buffer> {
    for (let left = bytes; left > 0; left -= chunk.length) {
      yield cipher.update(chunk.subarray(0, Math.min(left, chunk.length)));
    }
  }
  await pipeline(Readable.from(stream()), createWriteStream(file));
}

async function umoci(args: string[]): Promise<void> {
  await runChecked('umoci', args, { timeoutMs: 300_000 });
}

async function build(cluster: RealCluster, layout: string, log: (message: string) => void): Promise<void> {
  const work = `${layout}.build-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const fresh = join(work, 'oci');
    const testLayout = join(clusterPaths(cluster.dir).imagesDir, 'oci');
    const staging = `${fresh}:staging`;
    await runChecked(
      'skopeo',
      [
        '--insecure-policy',
        'copy',
        '--quiet',
        `oci:${testLayout}:${TEST_IMAGES.busybox1.layoutTag}`,
        `oci:${fresh}:staging`,
      ],
      { timeoutMs: 120_000 },
    );
    for (let layer = 1; layer <= LAYERS; layer++) {
      log(`realistic image: layer ${layer} of ${LAYERS} (${LAYER_MIB} MiB)`);
      const dir = join(work, `layer-${layer}`);
      await mkdir(dir, { recursive: true });
      await writeIncompressible(join(dir, 'data.bin'), LAYER_MIB << 20, layer);
      await writeFile(join(dir, 'README'), `layer ${layer} of the kruise-daemon side-by-side bench image\n`);
      await umoci(['insert', '--image', staging, dir, `/opt/bench/layer-${layer}`]);
      await rm(dir, { recursive: true, force: true });
    }
    await umoci(['config', '--image', staging, '--tag', LAYOUT_TAG, '--config.cmd', '/bin/sh']);
    await umoci(['rm', '--image', staging]);
    await umoci(['gc', '--layout', fresh]);
    await rm(layout, { recursive: true, force: true });
    await mkdir(join(layout, '..'), { recursive: true });
    await rename(fresh, layout);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The image's reference in the cluster's registry, built (first run of a recipe) and pushed (if missing). */
export async function realisticImage(cluster: RealCluster, log: (message: string) => void): Promise<string> {
  const layout = layoutDir();
  let digest = (await layoutDigests(layout)).get(LAYOUT_TAG);
  if (digest === undefined) {
    log(`realistic image: building ${LAYERS} layers of ${LAYER_MIB} MiB into ${layout} (first run only)`);
    await build(cluster, layout, log);
    digest = (await layoutDigests(layout)).get(LAYOUT_TAG);
    if (digest === undefined) throw new Error(`realistic image: ${layout} has no tag ${LAYOUT_TAG} after the build`);
  }
  const target = { registry: cluster.registry, repository: REPOSITORY, tag: TAG, layoutTag: LAYOUT_TAG };
  if ((await registryDigest(target)) !== digest) {
    log(`realistic image: pushing ${cluster.registry}/${REPOSITORY}:${TAG}`);
    await push(clusterPaths(cluster.dir), layout, target);
  }
  return `${cluster.registry}/${REPOSITORY}:${TAG}`;
}
