// Component "kruise-image": the kruise-daemon image (build.ts, cached by content) pushed to the cluster's open
// registry as $REGISTRY/kruise-daemon:<tag>, where every node's containerd pulls it (plain http through its
// certs.d), so deploy/'s DaemonSet and Deployment run the image users install. KRUISE_IMAGE names it.
import type { ClusterComponent, ClusterContext } from '../component.js';
import { ClusterError } from '../runtime/errors.js';
import { runChecked } from '../runtime/exec.js';
import { registryHasManifest } from '../runtime/http-probe.js';
import { ensureImage, type BuiltImage } from './build.js';
import { IMAGE_NAME } from './spec.js';

/** Copy the image to `registry` (host:port, plain http) unless it holds that tag already; returns the reference. */
export async function pushImage(image: BuiltImage, registry: string, repository = IMAGE_NAME): Promise<string> {
  const ref = `${registry}/${repository}:${image.tag}`;
  // the tag is derived from the content, so a registry holding it holds this image
  if (await registryHasManifest(registry, repository, image.tag)) return ref;
  await runChecked(
    'skopeo',
    [
      '--insecure-policy',
      'copy',
      '--quiet',
      '--dest-tls-verify=false',
      '--preserve-digests',
      `oci:${image.layout}:${image.tag}`,
      `docker://${ref}`,
    ],
    { timeoutMs: 300_000 },
  );
  return ref;
}

export function kruiseImage(): ClusterComponent {
  return {
    name: 'kruise-image',
    async up(ctx: ClusterContext) {
      const registry = ctx.env.REGISTRY;
      if (!registry) throw new ClusterError('kruise-image needs REGISTRY from the registries component');
      const image = await ensureImage({ log: ctx.log });
      const ref = await pushImage(image, registry);
      return { KRUISE_IMAGE: ref, KRUISE_IMAGE_DIGEST: image.manifestDigest };
    },
    async down() {
      // the image stays in $KD_CACHE/image and in the registry's data (down --purge deletes that)
    },
  };
}
