// Our own kubeconfig loader (no generated API code): clusters, users and contexts, the current or a named context,
// certificates inline or in files (relative to the kubeconfig), token or tokenFile, basic auth, insecure-skip-tls-verify,
// plain http servers. Credential plugins (exec, auth-provider) are refused with a clear message.
import { readFile } from 'node:fs/promises';
import { errorMessage } from '../../util/error-message.js';
import { dirname, isAbsolute, resolve } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { systemClock, type Clock } from '../../util/clock.js';
import {
  FileTokenSource,
  StaticTokenSource,
  normaliseServer,
  type Authentication,
  type Connection,
} from './connection.js';
import { isRecord } from '../../util/is-record.js';

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

interface Named {
  name: string;
  body: Record<string, unknown>;
  /** Directory of the file that defined the entry (relative paths are resolved against it). */
  dir: string;
}

interface ParsedFile {
  path: string;
  clusters: Named[];
  users: Named[];
  contexts: Named[];
  currentContext?: string | undefined;
}

export interface KubeconfigOptions {
  /** Context to use instead of current-context. */
  context?: string | undefined;
  clock?: Clock | undefined;
}

/**
 * Load a kubeconfig. `paths` is one file or a KUBECONFIG-style list (':'-separated, or an array), merged as
 * kubectl does: the first file that names a cluster/user/context wins, current-context from the first file setting it.
 */
export async function loadKubeconfig(paths: string | string[], options: KubeconfigOptions = {}): Promise<Connection> {
  const list = (Array.isArray(paths) ? paths : paths.split(':')).filter((p) => p.trim() !== '');
  if (list.length === 0) throw new KubeconfigError('no kubeconfig file given');
  const files: ParsedFile[] = [];
  for (const path of list) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // kubectl skips missing files in a KUBECONFIG list, but a single named file must exist.
      if (code === 'ENOENT' && list.length > 1) continue;
      throw new KubeconfigError(`cannot read kubeconfig ${path}: ${code ?? String(err)}`);
    }
    files.push(parseKubeconfigText(text, resolve(path)));
  }
  if (files.length === 0) throw new KubeconfigError(`none of the kubeconfig files exist: ${list.join(', ')}`);
  return await connectionFromParsed(files, options);
}

/** Load from kubeconfig text (for tests and for configs handed over in memory). Relative paths resolve against `dir`. */
export async function loadKubeconfigFromString(
  text: string,
  options: KubeconfigOptions & { dir?: string } = {},
): Promise<Connection> {
  const file = parseKubeconfigText(text, resolve(options.dir ?? process.cwd(), '(inline)'));
  return await connectionFromParsed([file], options);
}

function parseKubeconfigText(text: string, path: string): ParsedFile {
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${path} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === undefined || doc === null) doc = {};
  if (!isRecord(doc)) throw new KubeconfigError(`kubeconfig ${path} must be a YAML mapping`);
  const dir = dirname(path);
  const current = doc['current-context'];
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new KubeconfigError(`kubeconfig ${path}: current-context must be a string`);
  }
  return {
    path,
    clusters: namedList(doc, 'clusters', 'cluster', path, dir),
    users: namedList(doc, 'users', 'user', path, dir),
    contexts: namedList(doc, 'contexts', 'context', path, dir),
    currentContext: current || undefined,
  };
}

function namedList(doc: Record<string, unknown>, key: string, inner: string, path: string, dir: string): Named[] {
  const raw = doc[key];
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new KubeconfigError(`kubeconfig ${path}: ${key} must be a list`);
  return raw.map((entry: unknown, i) => {
    if (!isRecord(entry)) throw new KubeconfigError(`kubeconfig ${path}: ${key}[${i}] must be a mapping`);
    const name = entry.name;
    if (typeof name !== 'string' || !name) {
      throw new KubeconfigError(`kubeconfig ${path}: ${key}[${i}].name is missing`);
    }
    const body = entry[inner] ?? {};
    if (!isRecord(body)) throw new KubeconfigError(`kubeconfig ${path}: ${key}[${i}].${inner} must be a mapping`);
    return { name, body, dir };
  });
}

function firstNamed(files: ParsedFile[], pick: (f: ParsedFile) => Named[], name: string): Named | undefined {
  for (const f of files) {
    const hit = pick(f).find((n) => n.name === name);
    if (hit) return hit;
  }
  return undefined;
}

function allNames(files: ParsedFile[], pick: (f: ParsedFile) => Named[]): string {
  const names = [...new Set(files.flatMap((f) => pick(f).map((n) => n.name)))];
  return names.length ? names.join(', ') : 'none';
}

async function connectionFromParsed(files: ParsedFile[], options: KubeconfigOptions): Promise<Connection> {
  const where = `kubeconfig ${files.map((f) => f.path).join(':')}`;
  const contextName = options.context ?? files.find((f) => f.currentContext)?.currentContext;
  if (!contextName) {
    throw new KubeconfigError(`${where}: no current-context is set and no context was named`);
  }
  const context = firstNamed(files, (f) => f.contexts, contextName);
  if (!context) {
    throw new KubeconfigError(
      `${where}: context "${contextName}" not found (contexts: ${allNames(files, (f) => f.contexts)})`,
    );
  }
  const clusterName = optionalString(context.body, 'cluster', `${where}: context "${contextName}"`);
  if (!clusterName) throw new KubeconfigError(`${where}: context "${contextName}" names no cluster`);
  const cluster = firstNamed(files, (f) => f.clusters, clusterName);
  if (!cluster) {
    throw new KubeconfigError(
      `${where}: cluster "${clusterName}" (context "${contextName}") not found (clusters: ${allNames(files, (f) => f.clusters)})`,
    );
  }
  const userName = optionalString(context.body, 'user', `${where}: context "${contextName}"`);
  let user: Named | undefined;
  if (userName) {
    user = firstNamed(files, (f) => f.users, userName);
    if (!user) {
      throw new KubeconfigError(
        `${where}: user "${userName}" (context "${contextName}") not found (users: ${allNames(files, (f) => f.users)})`,
      );
    }
  }
  const clusterWhere = `${where}: cluster "${clusterName}"`;
  const serverRaw = optionalString(cluster.body, 'server', clusterWhere);
  if (!serverRaw) throw new KubeconfigError(`${clusterWhere} has no server`);
  let server: string;
  try {
    server = normaliseServer(serverRaw, clusterWhere);
  } catch (err) {
    throw new KubeconfigError((err as Error).message);
  }
  if (cluster.body['proxy-url'] !== undefined) {
    throw new KubeconfigError(`${clusterWhere}: proxy-url is not supported by this client`);
  }
  const insecure = cluster.body['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    throw new KubeconfigError(`${clusterWhere}: insecure-skip-tls-verify must be true or false`);
  }
  const ca = await pemFromFileOrData(cluster, 'certificate-authority', clusterWhere);
  const namespace = optionalString(context.body, 'namespace', `${where}: context "${contextName}"`);
  const connection: Connection = {
    server,
    ca,
    insecureSkipTLSVerify: insecure === true,
    tlsServerName: optionalString(cluster.body, 'tls-server-name', clusterWhere),
    auth: { kind: 'none' },
    namespace: namespace || undefined,
    origin: `${where}, context ${contextName}`,
  };
  if (user) {
    const userWhere = `${where}: user "${user.name}"`;
    rejectUnsupported(user, userWhere);
    connection.cert = await pemFromFileOrData(user, 'client-certificate', userWhere);
    connection.key = await pemFromFileOrData(user, 'client-key', userWhere);
    if (!connection.cert !== !connection.key) {
      throw new KubeconfigError(`${userWhere}: client-certificate and client-key must be given together`);
    }
    connection.auth = authOf(user, userWhere, options);
  }
  return connection;
}

function rejectUnsupported(user: Named, where: string): void {
  const exec = user.body.exec;
  if (exec !== undefined && exec !== null) {
    const command = isRecord(exec) && typeof exec.command === 'string' ? ` (command ${exec.command})` : '';
    throw new KubeconfigError(
      `${where} uses an exec credential plugin${command}, which this client does not support: ` +
        'use a token, tokenFile or client certificate (for example a service-account token)',
    );
  }
  const provider = user.body['auth-provider'];
  if (provider !== undefined && provider !== null) {
    const name = isRecord(provider) && typeof provider.name === 'string' ? ` "${provider.name}"` : '';
    throw new KubeconfigError(
      `${where} uses the auth-provider plugin${name}, which this client does not support: ` +
        'use a token, tokenFile or client certificate',
    );
  }
  for (const key of ['as', 'as-groups', 'as-uid', 'as-user-extra']) {
    if (user.body[key] !== undefined) throw new KubeconfigError(`${where}: impersonation (${key}) is not supported`);
  }
}

function authOf(user: Named, where: string, options: KubeconfigOptions): Authentication {
  const token = optionalString(user.body, 'token', where);
  const tokenFile =
    optionalString(user.body, 'tokenFile', where) ?? optionalString(user.body, 'token-file', where) ?? undefined;
  const username = optionalString(user.body, 'username', where);
  const password = optionalString(user.body, 'password', where);
  if (token) return { kind: 'token', source: new StaticTokenSource(token) };
  if (tokenFile) {
    return {
      kind: 'token',
      source: new FileTokenSource(resolvePath(user.dir, tokenFile), options.clock ?? systemClock),
    };
  }
  if (username || password) {
    if (!username || !password) throw new KubeconfigError(`${where}: username and password must be given together`);
    return { kind: 'basic', username, password };
  }
  return { kind: 'none' };
}

function optionalString(body: Record<string, unknown>, key: string, where: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new KubeconfigError(`${where}: ${key} must be a string`);
  return value;
}

function resolvePath(dir: string, file: string): string {
  return isAbsolute(file) ? file : resolve(dir, file);
}

/** `<base>-data` (base64 PEM) wins over `<base>` (a file path, relative to the kubeconfig). */
async function pemFromFileOrData(entry: Named, base: string, where: string): Promise<Buffer | undefined> {
  const data = optionalString(entry.body, `${base}-data`, where);
  if (data) {
    const pem = Buffer.from(data, 'base64');
    checkPem(pem, `${where}: ${base}-data`);
    return pem;
  }
  const file = optionalString(entry.body, base, where);
  if (!file) return undefined;
  const path = resolvePath(entry.dir, file);
  let pem: Buffer;
  try {
    pem = await readFile(path);
  } catch (err) {
    throw new KubeconfigError(
      `${where}: cannot read ${base} ${path}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`,
    );
  }
  checkPem(pem, `${where}: ${base} ${path}`);
  return pem;
}

function checkPem(pem: Buffer, what: string): void {
  if (!pem.toString('latin1').includes('-----BEGIN ')) throw new KubeconfigError(`${what} is not PEM data`);
}
