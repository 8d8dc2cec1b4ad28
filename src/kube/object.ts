// The shape every Kubernetes object has on the wire (JSON, timestamps as strings). Typed kinds extend KubeObject;
// client-node's generated types are usable with `import type`, but note they declare timestamps as Date while the
// wire (and this client) carries RFC 3339 strings.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string | undefined;
  generateName?: string;
  namespace?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface ListMeta {
  resourceVersion?: string | undefined;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/** The cache key of an object: "namespace/name", or "name" for cluster-scoped objects (as client-go's). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Split a cache key back into namespace and name. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
