// Container image references: parse, normalize, validate; and the string to hand to CRI PullImage.
// Grammar as Docker/containerd use it (distribution "reference"):
//   reference := name [ ":" tag ] [ "@" digest ]
//   name      := [ registry "/" ] path        registry = host [ ":" port ]
// The first path component is a registry when it contains '.' or ':', is "localhost", or has an
// upper-case letter (repository paths are lower-case); otherwise the registry is docker.io, and a
// single-component docker.io path gets the "library/" prefix. Tag defaults to "latest" unless a
// digest is given. Unlike OpenKruise (which pulls `name:tag` and so turns a digest into
// `nginx:sha256:...`), a digest is pulled as `name@digest`.
// Pure and dependency-free: the agent loads it.

export const DEFAULT_REGISTRY = 'docker.io';
export const DEFAULT_TAG = 'latest';
const LEGACY_DEFAULT_REGISTRY = 'index.docker.io';
const OFFICIAL_REPOSITORY_PREFIX = 'library/';
const MAX_NAME_LENGTH = 255;

/** Digest algorithms containerd verifies, with the length of their hex encoding. */
const DIGEST_HEX_LENGTHS: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const IPV6_HOST = /^\[[a-fA-F0-9:]+\]$/;
const PORT = /^[0-9]+$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST_ALGORITHM = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*$/;
const SHORT_IMAGE_ID = /^[a-f0-9]{64}$/;

export interface ImageReference {
  /** Registry host with optional port: `docker.io`, `localhost:5000`, `registry.k8s.io`. */
  readonly registry: string;
  /** Repository path inside the registry: `library/nginx`, `e2e-test-images/nginx`. */
  readonly path: string;
  /** The tag as written, if any (no default applied). */
  readonly tag?: string;
  /** `algorithm:hex`, if given. */
  readonly digest?: string;
}

export type ImageReferenceParseResult =
  { readonly ok: true; readonly reference: ImageReference } | { readonly ok: false; readonly error: string };

export class InvalidImageReferenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidImageReferenceError';
  }
}

/** Parse without throwing. `error` says what is wrong, naming the part at fault. */
export function tryParseImageReference(input: unknown): ImageReferenceParseResult {
  if (typeof input !== 'string') return fail(`image reference must be a string, got ${describeType(input)}`);
  if (input === '') return fail('image reference must not be empty');
  const quoted = JSON.stringify(input);
  if (/\s/.test(input)) return fail(`invalid image reference ${quoted}: must not contain whitespace`);
  if (SHORT_IMAGE_ID.test(input)) {
    return fail(`invalid image reference ${quoted}: a 64-character hexadecimal string is an image ID, not a name`);
  }

  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    const digestError = checkDigest(digest);
    if (digestError !== undefined) return fail(`invalid image reference ${quoted}: ${digestError}`);
  }

  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) {
      return fail(
        `invalid image reference ${quoted}: invalid tag ${JSON.stringify(tag)}: a tag is 1-128 letters, digits, ` +
          `'_', '.' or '-', not starting with '.' or '-'`,
      );
    }
  }
  if (rest === '') return fail(`invalid image reference ${quoted}: repository name must not be empty`);

  const { registry, path } = splitRegistry(rest);
  const registryError = checkRegistry(registry);
  if (registryError !== undefined) return fail(`invalid image reference ${quoted}: ${registryError}`);
  const pathError = checkPath(path);
  if (pathError !== undefined) return fail(`invalid image reference ${quoted}: ${pathError}`);
  if (registry.length + 1 + path.length > MAX_NAME_LENGTH) {
    return fail(
      `invalid image reference ${quoted}: repository name must not be more than ${MAX_NAME_LENGTH} characters`,
    );
  }
  const reference: ImageReference = { registry, path, ...(tag !== undefined && { tag }), ...(digest && { digest }) };
  return { ok: true, reference };
}

/** Parse or throw InvalidImageReferenceError. */
export function parseImageReference(input: string): ImageReference {
  const result = tryParseImageReference(input);
  if (!result.ok) throw new InvalidImageReferenceError(result.error);
  return result.reference;
}

/** undefined when `input` is a valid image reference, else the reason. */
export function validateImageReference(input: unknown): string | undefined {
  const result = tryParseImageReference(input);
  return result.ok ? undefined : result.error;
}

/** Fully qualified repository name: `docker.io/library/nginx`. */
export function repositoryName(ref: ImageReference): string {
  return `${ref.registry}/${ref.path}`;
}

/** Short form as Docker prints it: `nginx`, `foo/bar`, `registry.k8s.io/pause` (the NodeImage key). */
export function familiarName(ref: ImageReference): string {
  if (ref.registry !== DEFAULT_REGISTRY) return repositoryName(ref);
  if (ref.path.startsWith(OFFICIAL_REPOSITORY_PREFIX)) {
    const short = ref.path.slice(OFFICIAL_REPOSITORY_PREFIX.length);
    if (!short.includes('/')) return short;
  }
  return ref.path;
}

/**
 * Normalized full reference: `docker.io/library/nginx:latest`; a digest is kept, with the tag if one
 * was written (`docker.io/library/nginx:1.25@sha256:...`).
 */
export function normalizedReference(ref: ImageReference): string {
  const tag = ref.tag ?? (ref.digest ? undefined : DEFAULT_TAG);
  return repositoryName(ref) + (tag !== undefined ? `:${tag}` : '') + (ref.digest ? `@${ref.digest}` : '');
}

/** What to pull: `name@digest` when there is a digest (a tag beside it is ignored, as containerd does), else `name:tag`. */
export function pullReference(ref: ImageReference): string {
  if (ref.digest) return `${repositoryName(ref)}@${ref.digest}`;
  return `${repositoryName(ref)}:${ref.tag ?? DEFAULT_TAG}`;
}

/**
 * OpenKruise's (NodeImage key, tag) split: the familiar name, and the digest if there is one, else the
 * tag (default `latest`). `nginx:1@sha256:...` → (`nginx`, `sha256:...`).
 */
export function nameAndTag(ref: ImageReference): { name: string; tag: string } {
  return { name: familiarName(ref), tag: ref.digest ?? ref.tag ?? DEFAULT_TAG };
}

/** True when `tag` is a digest (`algorithm:hex`) rather than a tag; a tag can never contain ':'. */
export function isDigest(tag: string): boolean {
  return tag.includes(':');
}

/**
 * Join a NodeImage entry (`name` key, `tag` which may be a digest) back into one reference string
 * (`nginx` + `1.25` → `nginx:1.25`, `nginx` + `sha256:...` → `nginx@sha256:...`).
 */
export function joinNameAndTag(name: string, tag: string): string {
  return `${name}${isDigest(tag) ? '@' : ':'}${tag}`;
}

/** Parse a NodeImage entry (`name` + `tag`/digest) into a reference; the pull string is pullReference() of it. */
export function tryParseNameAndTag(name: string, tag: string): ImageReferenceParseResult {
  if (name === '') return fail('image name must not be empty');
  if (tag === '') return fail(`tag for image ${JSON.stringify(name)} must not be empty`);
  if (name.includes('@') || name.slice(name.lastIndexOf('/') + 1).includes(':')) {
    return fail(`invalid image name ${JSON.stringify(name)}: the name must not carry a tag or digest`);
  }
  return tryParseImageReference(joinNameAndTag(name, tag));
}

function splitRegistry(name: string): { registry: string; path: string } {
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const isRegistry =
    slash >= 0 &&
    (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase());
  let registry = isRegistry ? first : DEFAULT_REGISTRY;
  let path = isRegistry ? name.slice(slash + 1) : name;
  if (registry === LEGACY_DEFAULT_REGISTRY) registry = DEFAULT_REGISTRY;
  if (registry === DEFAULT_REGISTRY && !path.includes('/')) path = OFFICIAL_REPOSITORY_PREFIX + path;
  return { registry, path };
}

function checkRegistry(registry: string): string | undefined {
  const bad = `invalid registry ${JSON.stringify(registry)}: expected host[:port] (letters, digits, '-' and '.')`;
  let host = registry;
  const portColon = registry.startsWith('[') ? registry.indexOf(':', registry.indexOf(']')) : registry.indexOf(':');
  if (portColon >= 0) {
    host = registry.slice(0, portColon);
    if (!PORT.test(registry.slice(portColon + 1))) return bad;
  }
  if (IPV6_HOST.test(host)) return undefined;
  if (host === '' || !host.split('.').every((component) => DOMAIN_COMPONENT.test(component))) return bad;
  return undefined;
}

function checkPath(path: string): string | undefined {
  if (path !== path.toLowerCase()) return `repository name ${JSON.stringify(path)} must be lowercase`;
  if (path.split('/').every((component) => PATH_COMPONENT.test(component))) return undefined;
  return (
    `invalid repository path ${JSON.stringify(path)}: each '/'-separated component must be lowercase letters and ` +
    `digits, optionally joined by '.', '_', '__' or '-'`
  );
}

function checkDigest(digest: string): string | undefined {
  const colon = digest.indexOf(':');
  const algorithm = colon < 0 ? '' : digest.slice(0, colon);
  const hex = colon < 0 ? '' : digest.slice(colon + 1);
  if (!DIGEST_ALGORITHM.test(algorithm) || hex === '') {
    return `invalid digest ${JSON.stringify(digest)}: expected <algorithm>:<hex>, e.g. sha256:<64 hex digits>`;
  }
  const length = DIGEST_HEX_LENGTHS[algorithm];
  if (length === undefined) {
    const supported = Object.keys(DIGEST_HEX_LENGTHS).join(', ');
    return `unsupported digest algorithm ${JSON.stringify(algorithm)} (supported: ${supported})`;
  }
  if (!/^[a-f0-9]+$/.test(hex)) {
    return `invalid digest ${JSON.stringify(digest)}: the ${algorithm} value must be lowercase hexadecimal`;
  }
  if (hex.length !== length) {
    return `invalid digest ${JSON.stringify(digest)}: ${algorithm} needs ${length} hex digits, got ${hex.length}`;
  }
  return undefined;
}

function fail(error: string): ImageReferenceParseResult {
  return { ok: false, error };
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The registry an image is pulled from (docker.io for Hub references); for an unparseable one, the text before "/". */
export function registryOf(reference: string): string {
  const result = tryParseImageReference(reference);
  if (result.ok) return result.reference.registry;
  const firstSlash = reference.indexOf('/');
  return firstSlash > 0 ? reference.slice(0, firstSlash) : DEFAULT_REGISTRY;
}
