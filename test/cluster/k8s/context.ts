// The real cluster's layout for a component: from the variables of this up (CLUSTER_SUBNET_OCTET, NODE_COUNT), or
// for down/status after a crash, from allocations.json and the node directories left on disk.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterContext } from '../component.js';
import { clusterPaths } from '../paths.js';
import { readAllocations } from '../runtime/allocations.js';
import { k8sLayout, MAX_REAL_NODES, type K8sLayout } from './layout.js';

/** Highest node index with a directory under <dir>/nodes (0 when none). */
export async function nodeDirsOnDisk(dir: string): Promise<number> {
  const entries = await readdir(join(dir, 'nodes')).catch(() => []);
  const indexes = entries
    .map((entry) => /^kd-node-(\d+)$/.exec(entry)?.[1])
    .filter((index): index is string => index !== undefined)
    .map(Number)
    .filter((index) => index >= 1 && index <= MAX_REAL_NODES);
  return Math.max(0, ...indexes);
}

/** The layout, or undefined when this cluster never chose its subnet (nothing to clean up). */
export async function layoutFromContext(
  ctx: ClusterContext,
  options: { allNodesOnDisk?: boolean } = {},
): Promise<K8sLayout | undefined> {
  const octet =
    ctx.env.CLUSTER_SUBNET_OCTET !== undefined
      ? Number(ctx.env.CLUSTER_SUBNET_OCTET)
      : (await readAllocations(clusterPaths(ctx.dir).allocationsFile)).subnetOctet;
  if (octet === undefined || !Number.isInteger(octet)) return undefined;
  const fromEnv = Number(ctx.env.NODE_COUNT ?? '0');
  const onDisk = await nodeDirsOnDisk(ctx.dir);
  const count = options.allNodesOnDisk ? Math.max(fromEnv, onDisk) : fromEnv || onDisk;
  return k8sLayout(ctx.dir, octet, Math.max(1, Math.min(count, MAX_REAL_NODES)));
}
