// What the agent's DaemonSet (deploy/base/daemon/daemonset.yaml) sets that also applies off a cluster: its V8 heap
// flags (NODE_OPTIONS). Read from the manifest, so `npm run dev`, the benchmarks and the tests run the agent as it is
// deployed, from one source.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { packageRoot } from '../../src/util/repo-root.js';

export const DAEMONSET_MANIFEST = join(packageRoot(), 'deploy', 'base', 'daemon', 'daemonset.yaml');

interface EnvVar {
  name?: unknown;
  value?: unknown;
}

/** NODE_OPTIONS of the DaemonSet's `daemon` container. */
export function daemonSetNodeOptions(manifest: string = readFileSync(DAEMONSET_MANIFEST, 'utf8')): string {
  const doc = load(manifest) as {
    spec?: { template?: { spec?: { containers?: { name?: string; env?: EnvVar[] }[] } } };
  };
  const container = doc.spec?.template?.spec?.containers?.find((c) => c.name === 'daemon');
  const value = container?.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new Error(`${DAEMONSET_MANIFEST}: the daemon container sets no NODE_OPTIONS`);
  }
  return value;
}
