// Image references as container runtimes read them: [registry[:port]/]path[:tag][@digest].
// The grammar follows the published distribution reference format (lower-case path components separated by
// "/", optional tag of up to 128 word characters, optional algorithm:hex digest); the registry is the first
// component when it looks like a host (has a "." or ":", or is "localhost"), otherwise Docker Hub.

const HOST_COMPONENT = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)';
const HOST = `(?:${HOST_COMPONENT}(?:\\.${HOST_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]{1,5})?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(
  `^(?:(${HOST})/)?(${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);

/** Docker Hub, the registry of references without a registry part. */
export const DEFAULT_REGISTRY = 'docker.io';

export interface ImageReference {
  /** Registry host[:port] as written, or docker.io. */
  registry: string;
  /** Repository path without the registry. */
  repository: string;
  tag?: string;
  digest?: string;
}

/** Parse a reference; undefined when it is not one. The registry part must look like a host to count as one. */
export function parseImageReference(reference: string): ImageReference | undefined {
  if (reference.length === 0 || reference.length > 4096) return undefined;
  const firstSlash = reference.indexOf('/');
  const first = firstSlash < 0 ? '' : reference.slice(0, firstSlash);
  const hasRegistry = firstSlash > 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const match = REFERENCE.exec(hasRegistry ? reference : `${DEFAULT_REGISTRY}/${reference}`);
  if (!match) return undefined;
  const [, registry, repository, tag, digest] = match;
  if (!registry || !repository) return undefined;
  return { registry, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** Why `reference` is not a valid image reference, or undefined when it is. */
export function imageReferenceProblem(reference: string): string | undefined {
  if (reference.trim() === '') return 'image reference is empty';
  if (reference !== reference.trim()) return `image reference ${JSON.stringify(reference)} has surrounding spaces`;
  if (!parseImageReference(reference)) {
    return (
      `${JSON.stringify(reference)} is not an image reference ` +
      '(expected [registry[:port]/]name[:tag][@sha256:digest], name in lower case)'
    );
  }
  return undefined;
}

/** The registry an image is pulled from (docker.io for Hub references); the text before "/" when unparseable. */
export function registryOf(reference: string): string {
  const parsed = parseImageReference(reference);
  if (parsed) return parsed.registry;
  const firstSlash = reference.indexOf('/');
  return firstSlash > 0 ? reference.slice(0, firstSlash) : DEFAULT_REGISTRY;
}
