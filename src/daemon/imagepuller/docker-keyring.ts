// Registry credentials from Kubernetes pull secrets, matched to an image the way kubelet's keyring does it:
// a key names a registry host (with an optional port and path prefix, `*` wildcards per host label); every key
// that matches the image gives one credential, the most specific key first. Pure: no I/O, nothing logged.
import { isRecord } from '../../util/is-record.js';

export const DOCKER_CONFIG_JSON_TYPE = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CONFIG_JSON_KEY = '.dockerconfigjson';
export const DOCKERCFG_TYPE = 'kubernetes.io/dockercfg';
export const DOCKERCFG_KEY = '.dockercfg';

/** One registry login. Never log it. */
export interface RegistryCredential {
  /** The key it was stored under (host[:port][/path]), safe to show. */
  key: string;
  username?: string;
  password?: string;
  identityToken?: string | undefined;
  registryToken?: string | undefined;
}

/** The parts of a core/v1 Secret this module reads. */
export interface PullSecretObject {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

interface ParsedKey {
  host: string;
  port: string;
  path: string;
}

const DOCKER_HUB_HOSTS = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/** Read the credentials of a dockerconfigjson or dockercfg secret; throws an Error saying what is wrong (no secret values). */
export function credentialsOfSecret(secret: PullSecretObject): RegistryCredential[] {
  const name = `${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
  const data = secret.data ?? {};
  let entries: unknown;
  if (secret.type === DOCKER_CONFIG_JSON_TYPE || (secret.type === undefined && DOCKER_CONFIG_JSON_KEY in data)) {
    const doc = decodeJson(data[DOCKER_CONFIG_JSON_KEY], name, DOCKER_CONFIG_JSON_KEY);
    entries = isRecord(doc) ? doc.auths : undefined;
    if (!isRecord(entries)) throw new Error(`pull secret ${name}: ${DOCKER_CONFIG_JSON_KEY} has no "auths" object`);
  } else if (secret.type === DOCKERCFG_TYPE || (secret.type === undefined && DOCKERCFG_KEY in data)) {
    entries = decodeJson(data[DOCKERCFG_KEY], name, DOCKERCFG_KEY);
    if (!isRecord(entries)) throw new Error(`pull secret ${name}: ${DOCKERCFG_KEY} is not a JSON object`);
  } else {
    throw new Error(
      `pull secret ${name} has type ${JSON.stringify(secret.type ?? '')}; ` +
        `expected ${DOCKER_CONFIG_JSON_TYPE} or ${DOCKERCFG_TYPE}`,
    );
  }
  const out: RegistryCredential[] = [];
  for (const [key, value] of Object.entries(entries)) {
    if (!isRecord(value)) throw new Error(`pull secret ${name}: the entry for ${JSON.stringify(key)} is not an object`);
    out.push(credentialOf(name, key, value));
  }
  return out;
}

function credentialOf(secretName: string, key: string, entry: Record<string, unknown>): RegistryCredential {
  const text = (field: string): string | undefined => {
    const v = entry[field];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  let username = text('username');
  let password = text('password');
  const auth = text('auth');
  if (auth !== undefined && username === undefined && password === undefined) {
    const decoded = Buffer.from(auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) {
      throw new Error(`pull secret ${secretName}: the "auth" of ${JSON.stringify(key)} is not base64 of user:password`);
    }
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  return {
    key,
    ...(username !== undefined && { username }),
    ...(password !== undefined && { password }),
    ...(text('identitytoken') !== undefined && { identityToken: text('identitytoken') }),
    ...(text('registrytoken') !== undefined && { registryToken: text('registrytoken') }),
  };
}

function decodeJson(value: string | undefined, secretName: string, field: string): unknown {
  if (value === undefined || value === '') throw new Error(`pull secret ${secretName} has no ${field}`);
  try {
    return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as unknown;
  } catch {
    throw new Error(`pull secret ${secretName}: ${field} is not base64-encoded JSON`);
  }
}

/** Parse a keyring key (`https://reg.example.com:5000/v1/`, `*.example.com`, `reg/path`) into host, port, path. */
export function parseKeyringKey(key: string): ParsedKey | undefined {
  let rest = key.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = rest.indexOf('/');
  let path = '';
  if (slash >= 0) {
    path = rest.slice(slash);
    rest = rest.slice(0, slash);
  }
  if (rest === '') return undefined;
  let host = rest;
  let port = '';
  const colon = rest.lastIndexOf(':');
  if (colon >= 0 && !rest.endsWith(']')) {
    host = rest.slice(0, colon);
    port = rest.slice(colon + 1);
    if (!/^\d+$/.test(port)) return undefined;
  }
  host = host.toLowerCase();
  if (DOCKER_HUB_HOSTS.has(host) && port === '') {
    host = 'docker.io';
    if (path === '/v1/' || path === '/v1' || path === '/v2/' || path === '/') path = '';
  }
  return { host, port, path: path.replace(/\/+$/, '') };
}

/** Does the key `glob` cover the image repository `target` (`host[:port]/path`)? */
export function keyMatches(glob: ParsedKey, target: ParsedKey): boolean {
  if (glob.port !== target.port) return false;
  const globLabels = glob.host.split('.');
  const targetLabels = target.host.split('.');
  if (globLabels.length !== targetLabels.length) return false;
  for (let i = 0; i < globLabels.length; i++) {
    if (!labelMatches(globLabels[i]!, targetLabels[i]!)) return false;
  }
  // kubelet compares paths as plain prefixes
  return target.path.startsWith(glob.path);
}

/** A host label against a glob label where `*` stands for any run of characters (filepath.Match without classes). */
function labelMatches(glob: string, label: string): boolean {
  if (!glob.includes('*')) return glob === label;
  const pattern = new RegExp(`^${glob.split('*').map(escapeRegExp).join('[^.]*')}$`);
  return pattern.test(label);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The credentials that apply to `repository` (`registry[:port]/path`, no tag), most specific key first
 * (kubelet sorts keys in reverse order, so longer paths and literal hosts come before shorter ones and wildcards).
 */
export function credentialsFor(repository: string, credentials: readonly RegistryCredential[]): RegistryCredential[] {
  const target = parseKeyringKey(repository);
  if (!target) return [];
  const matched: Array<{ sortKey: string; credential: RegistryCredential }> = [];
  for (const credential of credentials) {
    const glob = parseKeyringKey(credential.key);
    if (glob && keyMatches(glob, target)) {
      matched.push({ sortKey: `${glob.host}${glob.port ? `:${glob.port}` : ''}${glob.path}`, credential });
    }
  }
  matched.sort((a, b) => (a.sortKey < b.sortKey ? 1 : a.sortKey > b.sortKey ? -1 : 0));
  const seen = new Set<string>();
  const out: RegistryCredential[] = [];
  for (const { credential } of matched) {
    const id = JSON.stringify([credential.username, credential.password, credential.identityToken]);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(credential);
  }
  return out;
}
