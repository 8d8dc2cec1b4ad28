// What the image puller's e2e tests and benchmark share (on the real cluster): reading and writing NodeImages,
// waiting for their statuses, reading the agent's metrics, removing images through CRI, a dockerconfigjson Secret.
import { type NodeImage, type NodeImageSpec, type NodeImageStatus, NODE_IMAGES } from '../../src/api/nodeimage.js';
import { CriClient } from '../../src/cri/client.js';
import { KubeClient } from '../../src/kube/client.js';
import { isNotFound } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/object.js';
import { httpGet } from '../component/daemon/agent-process.js';
import { waitFor } from './wait.js';

export const TEST_USER_AGENT = 'kd-imagepuller-test';
export const DAEMON_CONFIG_NAMESPACE = 'kruise-daemon-config';

export async function getNodeImage(client: KubeClient, name: string): Promise<NodeImage | undefined> {
  try {
    return await client.get<NodeImage>(NODE_IMAGES, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Create the NodeImage, or replace its spec.images when it exists. */
export async function setNodeImageSpec(client: KubeClient, name: string, spec: NodeImageSpec): Promise<void> {
  const existing = await getNodeImage(client, name);
  if (!existing) {
    await client.create(NODE_IMAGES, { metadata: { name }, spec });
    return;
  }
  // a merge patch with null first removes image keys no longer wanted
  const images: Record<string, unknown> = {};
  for (const key of Object.keys(existing.spec?.images ?? {})) images[key] = null;
  Object.assign(images, spec.images ?? {});
  await client.patch(NODE_IMAGES, name, { spec: { images } }, { type: 'merge' });
}

/** Wait until the NodeImage status satisfies `check` (return true); the last status is in the error. */
export async function waitForStatus(
  client: KubeClient,
  name: string,
  check: (status: NodeImageStatus, object: NodeImage) => boolean,
  options: { timeoutMs?: number; message?: string; intervalMs?: number } = {},
): Promise<NodeImage> {
  let last: NodeImageStatus | undefined;
  try {
    return await waitFor(
      async () => {
        const object = await getNodeImage(client, name);
        last = object?.status;
        return object?.status && check(object.status, object) ? object : undefined;
      },
      {
        timeoutMs: options.timeoutMs ?? 30_000,
        intervalMs: options.intervalMs ?? 50,
        message: options.message ?? 'the NodeImage status',
      },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last)}`);
  }
}

/**
 * A watch on the NodeImage, open when this resolves; its `reached` resolves when the watch shows a status that
 * satisfies `check` (event-driven, so a benchmark adds no polling load while it measures). Open it before the write
 * it waits for, then await `reached`. The watch starts at the list's
 * resourceVersion, not the object's: after its CRD was replaced, the API server's watch cache starts anew and an
 * object unchanged since then is older than the cache (410 Expired).
 */
export async function watchStatusUntil(
  client: KubeClient,
  name: string,
  check: (status: NodeImageStatus) => boolean,
  timeoutSeconds = 120,
): Promise<{ reached: Promise<void> }> {
  const fieldSelector = `metadata.name=${name}`;
  const current = await client.list<NodeImage>(NODE_IMAGES, { fieldSelector });
  const stream = await client.watch<NodeImage>(NODE_IMAGES, {
    fieldSelector,
    ...(current.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
    timeoutSeconds,
  });
  const reached = (async () => {
    try {
      for await (const event of stream) {
        if (event.type !== 'BOOKMARK' && event.object.status && check(event.object.status)) return;
      }
      throw new Error('the NodeImage watch ended before the status was reached');
    } finally {
      stream.close();
    }
  })();
  // the caller awaits it after its write: a failure meanwhile must not be an unhandled rejection
  reached.catch(() => undefined);
  return { reached };
}

/** The status of one tag. */
export function tagStatusOf(status: NodeImageStatus, image: string, tag: string) {
  return status.imageStatuses?.[image]?.tags.find((t) => t.tag === tag);
}

/** Sum of a counter in the agent's /metrics over the series whose labels include `labels`. */
export async function agentCounter(base: string, metric: string, labels: Record<string, string> = {}): Promise<number> {
  return metricSum((await httpGet(`${base}/metrics`)).body, metric, labels);
}

/** Sum of `metric` in a Prometheus text exposition over the series whose labels include `labels`. */
export function metricSum(body: string, metric: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of body.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!match || match[1] !== metric) continue;
    const text = match[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => text.includes(`${k}="${v}"`))) sum += Number(match[3]);
  }
  return sum;
}

/** CRI PullImage calls the agent has made (every attempt and credential). */
export function pullImageCalls(base: string): Promise<number> {
  return agentCounter(base, 'kruise_daemon_cri_requests_total', { method: 'PullImage' });
}

/**
 * Empty a node's NodeImage spec and wait until its agent has dropped every tag from the status: then no tag is
 * Succeeded, so the agent does not pull again an image the test removes next (it does so, within its 5 s check,
 * for the image of a tag still in the spec and Succeeded).
 */
export async function emptyNodeImage(client: KubeClient, name: string): Promise<void> {
  await setNodeImageSpec(client, name, { images: {} });
  await waitFor(async () => Object.keys((await getNodeImage(client, name))?.status?.imageStatuses ?? {}).length === 0, {
    message: `the agent dropped every tag of NodeImage ${name} from its status`,
  });
}

/** Remove images from the node (RemoveImage drops every tag of the same image id). */
export async function removeImages(cri: CriClient, references: readonly string[]): Promise<void> {
  for (const image of references) {
    const found = await cri.imageStatus({ image: { image } });
    if (found.image?.id) await cri.removeImage({ image: { image: found.image.id } });
  }
}

/** A kubernetes.io/dockerconfigjson Secret for one registry. */
export function dockerConfigSecret(name: string, registry: string, user: string, password: string): KubeObject {
  const config = { auths: { [registry]: { username: user, password } } };
  return {
    metadata: { name, namespace: DAEMON_CONFIG_NAMESPACE },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
  } as KubeObject;
}
