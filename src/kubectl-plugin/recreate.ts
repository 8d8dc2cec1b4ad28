// `recreate POD -c C [--ordered]`: check the pod and its containers, create a ContainerRecreateRequest and follow it
// until it is Completed. Exit 0 when every container was recreated, 1 when one failed or the wait timed out.
import { CONTAINER_RECREATE_REQUESTS, type ContainerRecreateRequest } from '../api/containerrecreaterequest.js';
import type { WirePod } from '../api/wire.js';
import { isNotFound } from '../kube/errors.js';
import { apiVersionOf, CoreResources } from '../kube/resource.js';
import { announceCreated, follow, namespaceOf, type PluginContext } from './context.js';

/** A problem with the pod or the containers asked for, said in one line; undefined when the CRR can be made. */
export function recreateProblem(pod: WirePod, containers: readonly string[]): string | undefined {
  const name = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  const known = (pod.spec?.containers ?? []).map((c) => c.name);
  const missing = containers.filter((c) => !known.includes(c));
  if (missing.length > 0) {
    return `pod ${name} has no container ${missing.join(', ')} (its containers: ${known.join(', ') || 'none'})`;
  }
  if (!pod.spec?.nodeName) return `pod ${name} is not scheduled to a node yet: nothing to recreate`;
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
    return `pod ${name} has finished (${pod.status.phase}): nothing to recreate`;
  }
  return undefined;
}

export function crrFor(
  namespace: string,
  pod: string,
  containers: readonly string[],
  ordered: boolean,
  name?: string,
): ContainerRecreateRequest {
  return {
    apiVersion: apiVersionOf(CONTAINER_RECREATE_REQUESTS),
    kind: CONTAINER_RECREATE_REQUESTS.kind,
    metadata: {
      namespace,
      ...(name ? { name } : { generateName: `${pod.slice(0, 52)}-` }),
      labels: { 'app.kubernetes.io/created-by': 'kubectl-kruise-node' },
    },
    spec: {
      podName: pod,
      containers: containers.map((c) => ({ name: c })),
      ...(ordered && { strategy: { orderedRecreate: true } }),
    },
  };
}

export function crrProgress(crr: ContainerRecreateRequest): string {
  const status = crr.status;
  if (!status?.phase) return 'waiting for the node agent';
  const states = (status.containerRecreateStates ?? []).map((s) => `${s.name}=${s.phase}`).join(' ');
  return `${status.phase}${states ? `: ${states}` : ''}`;
}

export async function runRecreate(
  ctx: PluginContext,
  command: { pod: string; containers: string[]; ordered: boolean; name?: string; follow: boolean; timeoutMs: number },
): Promise<number> {
  const namespace = namespaceOf(ctx);
  let pod: WirePod;
  try {
    pod = await ctx.api.get<WirePod>(CoreResources.pods, command.pod, { namespace });
  } catch (err) {
    if (isNotFound(err)) {
      ctx.stderr.write(`pod ${namespace}/${command.pod} not found\n`);
      return 1;
    }
    throw err;
  }
  const problem = recreateProblem(pod, command.containers);
  if (problem) {
    ctx.stderr.write(`${problem}\n`);
    return 1;
  }
  const created = await ctx.api.create<ContainerRecreateRequest>(
    CONTAINER_RECREATE_REQUESTS,
    crrFor(namespace, command.pod, command.containers, command.ordered, command.name),
    { namespace },
  );
  const name = created.metadata.name ?? '';
  const line =
    `containerrecreaterequest ${namespace}/${name} created: recreating ${command.containers.join(', ')} of pod ${command.pod}` +
    `${command.ordered ? ' in order' : ''} on node ${pod.spec?.nodeName ?? '?'}`;
  if (!announceCreated(ctx, created, line, command.follow)) return 0;
  const { last, finished } = await follow(
    ctx,
    command.timeoutMs,
    () => ctx.api.get<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, name, { namespace }),
    (crr) => crr.status?.phase === 'Completed',
    crrProgress,
  );
  if (!finished) {
    ctx.stderr.write(
      `containerrecreaterequest ${namespace}/${name} not completed after ${command.timeoutMs / 1000}s: ${crrProgress(last)}\n`,
    );
    return 1;
  }
  const states = last.status?.containerRecreateStates ?? [];
  const failed = states.filter((s) => s.phase !== 'Succeeded');
  if (failed.length > 0 || states.length < command.containers.length) {
    const why = failed.map((s) => `${s.name} ${s.phase}${s.message ? ` (${s.message})` : ''}`).join('; ');
    ctx.stderr.write(
      `containerrecreaterequest ${namespace}/${name} failed: ${why || last.status?.message || crrProgress(last)}\n`,
    );
    return 1;
  }
  if (ctx.global.output !== 'json') {
    ctx.stdout.write(
      `containerrecreaterequest ${namespace}/${name} completed: ${command.containers.join(', ')} recreated in place\n`,
    );
  }
  return 0;
}
