// Image pulls for containers (kuberuntime_image.go#EnsureImageExists): pull when the policy is Always or the image
// is absent (IfNotPresent), fail with ErrImageNeverPull when it is absent and the policy is Never; credentials from
// the pod's imagePullSecrets (kubernetes.io/dockerconfigjson or dockercfg) for the image's registry.
import type { CriClient } from '../../../src/cri/index.js';
import { registryOf } from '../../../src/cri/index.js';
import type { AuthConfig } from '../../../src/cri/types.js';
import type { ConfigSource } from './env.js';
import type { Container, Pod } from './types.js';

export class ImageError extends Error {
  constructor(
    readonly reason: 'ErrImagePull' | 'ImagePullBackOff' | 'ErrImageNeverPull' | 'InvalidImageName',
    message: string,
  ) {
    super(message);
  }
}

interface DockerAuth {
  username?: string;
  password?: string;
  auth?: string;
}

function authsOf(data: Record<string, string> | undefined): Record<string, DockerAuth> {
  const decode = (v: string | undefined): unknown => {
    if (!v) return undefined;
    try {
      return JSON.parse(Buffer.from(v, 'base64').toString('utf8'));
    } catch {
      return undefined;
    }
  };
  const json = decode(data?.['.dockerconfigjson']);
  if (json && typeof json === 'object' && 'auths' in json) return (json as { auths: Record<string, DockerAuth> }).auths;
  const cfg = decode(data?.['.dockercfg']);
  return cfg && typeof cfg === 'object' ? (cfg as Record<string, DockerAuth>) : {};
}

function hostOf(key: string): string {
  return key.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
}

async function credentialsFor(pod: Pod, image: string, source: ConfigSource): Promise<AuthConfig | undefined> {
  let registry: string;
  try {
    registry = registryOf(image);
  } catch {
    return undefined;
  }
  for (const ref of pod.spec.imagePullSecrets ?? []) {
    if (!ref.name) continue;
    const secret = await source.secret(pod.metadata.namespace, ref.name);
    for (const [key, auth] of Object.entries(authsOf(secret?.data))) {
      if (hostOf(key) !== registry) continue;
      return { username: auth.username ?? '', password: auth.password ?? '', auth: auth.auth ?? '' };
    }
  }
  return undefined;
}

/** Pull backoff per pod and image (kuberuntime_image.go: key `<pod uid>_<image>`). */
export interface PullBackoff {
  inBackoffSinceUpdate(key: string): number | undefined;
  next(key: string): void;
}

/**
 * Make sure the container's image is present; returns its image reference (for CreateContainer) and whether it was
 * pulled. A failed pull is ErrImagePull; while its backoff runs, ImagePullBackOff without pulling.
 */
export async function ensureImage(
  cri: CriClient,
  pod: Pod,
  container: Container,
  source: ConfigSource,
  backoff: PullBackoff,
  onPull: (phase: 'pulling' | 'pulled', ms?: number) => void,
): Promise<{ image: string; pulled: boolean }> {
  const image = container.image;
  const policy = container.imagePullPolicy ?? 'IfNotPresent';
  if (policy !== 'Always') {
    const status = await cri.imageStatus({ image: { image } });
    if (status.image) return { image, pulled: false };
    if (policy === 'Never') {
      throw new ImageError('ErrImageNeverPull', `Container image "${image}" is not present with pull policy of Never`);
    }
  }
  const key = `${pod.metadata.uid}_${image}`;
  if (backoff.inBackoffSinceUpdate(key) !== undefined) {
    throw new ImageError('ImagePullBackOff', `Back-off pulling image "${image}"`);
  }
  onPull('pulling');
  const started = Date.now();
  try {
    await cri.pullImage({ image: { image }, auth: await credentialsFor(pod, image, source) });
  } catch (err) {
    backoff.next(key);
    throw new ImageError('ErrImagePull', err instanceof Error ? err.message : String(err));
  }
  onPull('pulled', Date.now() - started);
  return { image, pulled: true };
}
