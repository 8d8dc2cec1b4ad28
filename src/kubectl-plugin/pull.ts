// `pull IMAGE [--nodes ...]`: create an ImagePullJob (every node, or the nodes named) and follow its status until the
// controller marks it complete. Exit 0 when every node pulled the image, 1 when one failed or the wait timed out.
import { nameAndTag, parseImageReference, repositoryName } from '../api/image-reference.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../api/imagepulljob.js';
import { NODE_IMAGES, type NodeImage } from '../api/nodeimage.js';
import { isNotFound } from '../kube/errors.js';
import { errorMessage } from '../util/error-message.js';
import { apiVersionOf, CoreResources } from '../kube/resource.js';
import { announceCreated, follow, namespaceOf, type PluginContext } from './context.js';
import { nodeImageRows } from './nodeimages.js';

export interface PullRequest {
  image: string;
  nodes: readonly string[];
  namespace: string;
  name?: string;
}

/** `pull-<last path element of the repository>-` (a valid generateName prefix). */
export function pullJobPrefix(image: string): string {
  const repo = repositoryName(parseImageReference(image));
  const last = repo.split('/').pop() ?? 'image';
  const cleaned = last
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `pull-${cleaned || 'image'}-`;
}

export function imagePullJobFor(request: PullRequest): ImagePullJob {
  return {
    apiVersion: apiVersionOf(IMAGE_PULL_JOBS),
    kind: IMAGE_PULL_JOBS.kind,
    metadata: {
      namespace: request.namespace,
      ...(request.name ? { name: request.name } : { generateName: pullJobPrefix(request.image) }),
      labels: { 'app.kubernetes.io/created-by': 'kubectl-kruise-node' },
    },
    spec: {
      image: request.image,
      ...(request.nodes.length > 0 && { selector: { names: [...request.nodes] } }),
      completionPolicy: { type: 'Always' },
    },
  };
}

export function pullProgress(job: ImagePullJob): string {
  const s = job.status;
  if (!s) return 'waiting for the controller';
  return `${s.succeeded ?? 0}/${s.desired} nodes pulled, ${s.failed ?? 0} failed, ${s.active ?? 0} pulling`;
}

/** Failed nodes whose reason is read and printed; the rest are counted. */
export const MAX_FAILURE_REASONS = 20;

/**
 * Why each failed node failed, one line per node (at most MAX_FAILURE_REASONS): the phase and message its agent
 * wrote for the image's tag in the node's NodeImage status (the ImagePullJob's own message only says it completed).
 */
export async function failureReasons(
  ctx: PluginContext,
  image: string,
  failedNodes: readonly string[],
): Promise<string[]> {
  if (failedNodes.length === 0) {
    return ["(the job names no failed node: `kubectl kruise-node nodeimages` shows every node's phase)"];
  }
  const wanted = nameAndTag(parseImageReference(image));
  const shown = failedNodes.slice(0, MAX_FAILURE_REASONS);
  const lines = await Promise.all(
    shown.map(async (node) => {
      let nodeImage: NodeImage;
      try {
        nodeImage = await ctx.api.get<NodeImage>(NODE_IMAGES, node);
      } catch (err) {
        return `${node}: ${isNotFound(err) ? `NodeImage ${node} not found` : `NodeImage unreadable: ${errorMessage(err)}`}`;
      }
      const row = nodeImageRows([nodeImage]).find((r) => r.image === wanted.name && r.tag === wanted.tag);
      if (!row) return `${node}: NodeImage ${node} does not ask for ${wanted.name}:${wanted.tag}`;
      const message = (row.message ?? '').replace(/\s*\n\s*/g, ' ').trim();
      return `${node}: ${row.phase}${message ? `: ${message}` : ''}`;
    }),
  );
  const more = failedNodes.length - shown.length;
  if (more > 0) lines.push(`... and ${more} more node(s): \`kubectl kruise-node nodeimages\``);
  return lines;
}

export async function runPull(
  ctx: PluginContext,
  command: { image: string; nodes: string[]; name?: string; follow: boolean; timeoutMs: number },
): Promise<number> {
  const namespace = namespaceOf(ctx);
  for (const node of command.nodes) {
    try {
      await ctx.api.get(CoreResources.nodes, node);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      ctx.stderr.write(`node ${node} not found: nothing created\n`);
      return 1;
    }
  }
  const created = await ctx.api.create<ImagePullJob>(IMAGE_PULL_JOBS, imagePullJobFor({ ...command, namespace }), {
    namespace,
  });
  const name = created.metadata.name ?? '';
  const where = command.nodes.length > 0 ? `nodes ${command.nodes.join(', ')}` : 'every node';
  const line = `imagepulljob ${namespace}/${name} created: pulling ${command.image} on ${where}`;
  if (!announceCreated(ctx, created, line, command.follow)) return 0;
  const { last, finished } = await follow(
    ctx,
    command.timeoutMs,
    () => ctx.api.get<ImagePullJob>(IMAGE_PULL_JOBS, name, { namespace }),
    (job) => job.status?.completionTime !== undefined,
    pullProgress,
  );
  if (!finished) {
    ctx.stderr.write(
      `imagepulljob ${namespace}/${name} not complete after ${command.timeoutMs / 1000}s: ${pullProgress(last)}\n`,
    );
    return 1;
  }
  const status = last.status;
  if ((status?.desired ?? 0) === 0) {
    ctx.stderr.write(`imagepulljob ${namespace}/${name} completed without any node to pull on\n`);
    return 1;
  }
  const failed = status?.failed ?? 0;
  if (failed > 0 || (status?.succeeded ?? 0) < (status?.desired ?? 0)) {
    ctx.stderr.write(
      `imagepulljob ${namespace}/${name} failed on ${failed} of ${status?.desired ?? 0} node(s): ` +
        `${status?.message ?? pullProgress(last)}\n`,
    );
    for (const line of await failureReasons(ctx, command.image, status?.failedNodes ?? [])) {
      ctx.stderr.write(`  ${line}\n`);
    }
    return 1;
  }
  if (ctx.global.output !== 'json') {
    ctx.stdout.write(
      `imagepulljob ${namespace}/${name} complete: ${command.image} is on ${status?.succeeded ?? 0} node(s)\n`,
    );
  }
  return 0;
}
