// In-cluster credentials: the pod's service account (token re-read on rotation, CA file, namespace) and the
// API server address from KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT.
import { readFile } from 'node:fs/promises';
import { errorMessage } from '../../util/error-message.js';
import { join } from 'node:path';
import { isIPv6 } from 'node:net';
import { systemClock, type Clock } from '../../util/clock.js';
import { FileTokenSource, type Connection } from './connection.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export class InClusterError extends Error {
  override readonly name = 'InClusterError';
}

export interface InClusterOptions {
  env?: NodeJS.ProcessEnv;
  /** Where the service-account files are mounted (token, ca.crt, namespace). */
  dir?: string | undefined;
  clock?: Clock | undefined;
}

/** True when the process looks like it runs in a pod (the service env variables are set). */
export function inClusterAvailable(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

export async function loadInCluster(options: InClusterOptions = {}): Promise<Connection> {
  const env = options.env ?? process.env;
  const dir = options.dir ?? SERVICE_ACCOUNT_DIR;
  const host = env.KUBERNETES_SERVICE_HOST?.trim();
  const port = env.KUBERNETES_SERVICE_PORT?.trim();
  if (!host || !port) {
    throw new InClusterError(
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set',
    );
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new InClusterError(`KUBERNETES_SERVICE_PORT=${JSON.stringify(port)} is not a port number`);
  }
  if (/[/\s@?#]/.test(host)) throw new InClusterError(`KUBERNETES_SERVICE_HOST=${JSON.stringify(host)} is not a host`);
  const tokenSource = new FileTokenSource(join(dir, 'token'), options.clock ?? systemClock);
  // Read once now so a missing mount is reported at start, not at the first request.
  try {
    await tokenSource.token();
  } catch (err) {
    throw new InClusterError(`service-account token: ${(err as Error).message}`);
  }
  let ca: Buffer;
  const caPath = join(dir, 'ca.crt');
  try {
    ca = await readFile(caPath);
  } catch (err) {
    throw new InClusterError(
      `cannot read service-account CA ${caPath}: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`,
    );
  }
  let namespace: string | undefined;
  try {
    namespace = (await readFile(join(dir, 'namespace'), 'utf8')).trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const hostPart = isIPv6(host) ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    ca,
    insecureSkipTLSVerify: false,
    auth: { kind: 'token', source: tokenSource },
    namespace,
    origin: `in-cluster service account (${dir})`,
  };
}
