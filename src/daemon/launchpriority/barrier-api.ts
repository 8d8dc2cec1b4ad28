// The launch-priority agent's writes to the API server, as the few operations it needs: see, create and add keys to
// a barrier ConfigMap, and touch a pod's annotations. A pod patch is guarded by the pod's uid (a JSON-patch `test`),
// so a pod deleted and recreated under the same name is never written by mistake.
// Every barrier it writes carries BARRIER_NODE_NAME_LABEL with the agent's node: the API server's node-confinement
// policy (deploy/node-confinement) lets an agent write only barriers labelled with its own node.
// It never reads a ConfigMap with `get` (RBAC gives it none: a get could read any ConfigMap of the cluster); it sees a
// barrier in the answer to a write, which admission confines to barriers of its node's pods. It never removes a key
// nor changes an owner: a barrier left by an earlier pod of the same name is left to the garbage collector.
// Needs configmaps create/patch and pods patch (deploy/base/daemon RBAC).
import { BARRIER_NODE_NAME_LABEL } from '../../api/constants.js';
import { CoreResources, type KubeClient, type KubeObject, type OwnerReference } from '../../kube/index.js';
import { isNotFound } from '../../kube/errors.js';

export interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

export interface PodOwner {
  name: string;
  uid: string;
}

/** A JSON patch operation (RFC 6902), the two used here. */
interface JsonPatchOp {
  op: 'test' | 'add';
  path: string;
  value: unknown;
}

export const BARRIER_VALUE = 'true';

function podOwnerReference(owner: PodOwner): OwnerReference {
  return { apiVersion: 'v1', kind: 'Pod', name: owner.name, uid: owner.uid };
}

/** `/` and `~` escaped for a JSON pointer (RFC 6901). */
function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function keysData(keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, BARRIER_VALUE]));
}

/**
 * The pod annotation patch, guarded by uid. A pod without annotations gets the whole map, guarded also by the
 * resourceVersion the cache saw: if annotations were added meanwhile, the patch fails (and is retried from a
 * fresher cache) instead of replacing them.
 */
function podAnnotationPatch(
  uid: string,
  annotations: Record<string, string>,
  absentAtResourceVersion?: string,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [{ op: 'test', path: '/metadata/uid', value: uid }];
  if (absentAtResourceVersion !== undefined) {
    ops.push({ op: 'test', path: '/metadata/resourceVersion', value: absentAtResourceVersion });
    ops.push({ op: 'add', path: '/metadata/annotations', value: annotations });
    return ops;
  }
  for (const [key, value] of Object.entries(annotations)) {
    ops.push({ op: 'add', path: `/metadata/annotations/${pointerSegment(key)}`, value });
  }
  return ops;
}

/** What the controller needs of the API server (tests give it a fake). */
export type BarrierApi = Pick<KubeBarrierApi, keyof KubeBarrierApi>;

export class KubeBarrierApi {
  /** `nodeName`: the agent's node, written into every barrier's BARRIER_NODE_NAME_LABEL. */
  constructor(
    private readonly client: Pick<KubeClient, 'create' | 'patch'>,
    private readonly nodeName: string,
  ) {}

  private labels(): Record<string, string> {
    return { [BARRIER_NODE_NAME_LABEL]: this.nodeName };
  }

  /**
   * The ConfigMap, or undefined when it does not exist: a merge patch that only sets its node label (nothing on a
   * barrier the agent wrote; a user-made one is taken over, as adding a key would) and answers with the object.
   * Admission sees it as an update (the node-confinement policies allow it only on a barrier of a pod of this node),
   * where a `get` would pass on any ConfigMap RBAC allows.
   */
  async observe(namespace: string, name: string): Promise<ConfigMapObject | undefined> {
    try {
      return await this.client.patch<ConfigMapObject>(
        CoreResources.configMaps,
        name,
        { metadata: { labels: this.labels() } },
        { type: 'merge', namespace },
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Create it owned by the pod with these keys; throws AlreadyExists when it exists. */
  create(namespace: string, name: string, owner: PodOwner, keys: readonly string[]): Promise<ConfigMapObject> {
    return this.client.create<ConfigMapObject>(
      CoreResources.configMaps,
      {
        metadata: { name, namespace, labels: this.labels(), ownerReferences: [podOwnerReference(owner)] },
        data: keysData(keys),
      },
      { namespace },
    );
  }

  /**
   * Add keys (merge patch, which also labels a barrier written before the label existed); throws NotFound when it
   * does not exist.
   */
  addKeys(namespace: string, name: string, keys: readonly string[]): Promise<ConfigMapObject> {
    return this.client.patch<ConfigMapObject>(
      CoreResources.configMaps,
      name,
      { metadata: { labels: this.labels() }, data: keysData(keys) },
      {
        type: 'merge',
        namespace,
      },
    );
  }

  /**
   * Set annotations on the pod with this uid (JSON patch: test uid, then add each key). When the cached pod has no
   * annotations, pass its resourceVersion: the map is added whole, only if the pod is still at that version.
   */
  async annotatePod(
    namespace: string,
    name: string,
    uid: string,
    annotations: Record<string, string>,
    absentAtResourceVersion?: string,
  ): Promise<void> {
    await this.client.patch(CoreResources.pods, name, podAnnotationPatch(uid, annotations, absentAtResourceVersion), {
      type: 'json',
      namespace,
    });
  }
}
