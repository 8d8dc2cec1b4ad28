// Where credentials come from, in controller-runtime's order: an explicit kubeconfig, $KUBECONFIG, the in-cluster
// service account, then ~/.kube/config.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../util/clock.js';
import type { Connection } from './connection.js';
import { inClusterAvailable, loadInCluster } from './in-cluster.js';
import { loadKubeconfig } from './kubeconfig.js';

export interface LoadConnectionOptions {
  /** A kubeconfig path (a --kubeconfig flag); wins over everything else. */
  kubeconfig?: string | undefined;
  /** Context name to use instead of current-context. */
  context?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Service-account mount (tests). */
  serviceAccountDir?: string;
  /** Home directory for ~/.kube/config (tests). */
  home?: string;
}

export async function loadConnection(options: LoadConnectionOptions = {}): Promise<Connection> {
  const env = options.env ?? process.env;
  const kubeOpts = { context: options.context, clock: options.clock };
  if (options.kubeconfig) return await loadKubeconfig(options.kubeconfig, kubeOpts);
  if (env.KUBECONFIG?.trim()) return await loadKubeconfig(env.KUBECONFIG, kubeOpts);
  if (inClusterAvailable(env)) {
    return await loadInCluster({ env, dir: options.serviceAccountDir, clock: options.clock });
  }
  const home = options.home ?? env.HOME ?? homedir();
  const fallback = join(home, '.kube', 'config');
  if (existsSync(fallback)) return await loadKubeconfig(fallback, kubeOpts);
  throw new Error(
    'no Kubernetes credentials found: set KUBECONFIG, pass a kubeconfig, run in a pod with a service account, ' +
      `or create ${fallback}`,
  );
}
