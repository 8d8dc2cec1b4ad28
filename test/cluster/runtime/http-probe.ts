// HTTP checks against the local registries (loopback only, short deadline).

export interface BasicCredentials {
  user: string;
  password: string;
}

export const MANIFEST_MEDIA_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ');

export function basicAuthHeader(credentials: BasicCredentials): string {
  return `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}`;
}

/** Status code of a request, or undefined when nothing answers. */
export async function httpStatus(
  url: string,
  options: { method?: string; credentials?: BasicCredentials | undefined; accept?: string; timeoutMs?: number } = {},
): Promise<number | undefined> {
  const headers: Record<string, string> = {};
  if (options.credentials) headers.authorization = basicAuthHeader(options.credentials);
  if (options.accept) headers.accept = options.accept;
  try {
    const response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      signal: AbortSignal.timeout(options.timeoutMs ?? 2_000),
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return undefined;
  }
}

/** Does `registry` (host:port) hold a manifest for repository:tag? */
export async function registryHasManifest(
  registry: string,
  repository: string,
  tag: string,
  credentials?: BasicCredentials,
): Promise<boolean> {
  const status = await httpStatus(`http://${registry}/v2/${repository}/manifests/${tag}`, {
    method: 'HEAD',
    credentials,
    accept: MANIFEST_MEDIA_TYPES,
  });
  return status === 200;
}
