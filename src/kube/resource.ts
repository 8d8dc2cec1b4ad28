// Which collection a request goes to: group/version/resource, namespaced or cluster-scoped, and the URL path of it.

export interface ResourceType {
  /** API group; '' for the core group (served under /api). */
  group: string;
  version: string;
  /** Plural resource name as in the URL (pods, nodeimages). */
  resource: string;
  namespaced: boolean;
  /** Kind of one object, used when creating objects and for events. */
  kind: string;
}

export function apiVersionOf(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

/** A readable name for logs and metric labels: "pods", "nodeimages.apps.kruise.io". */
export function resourceLabel(rt: ResourceType, subresource?: string): string {
  const base = rt.group ? `${rt.resource}.${rt.group}` : rt.resource;
  return subresource ? `${base}/${subresource}` : base;
}

const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const NAME_SEGMENT = /^[^/%]+$/;

function checkSegment(what: string, value: string, pattern: RegExp): string {
  if (!value || !pattern.test(value) || value === '.' || value === '..') {
    throw new Error(`invalid ${what} ${JSON.stringify(value)} for a Kubernetes API path`);
  }
  return encodeURIComponent(value);
}

export interface PathParts {
  namespace?: string | undefined;
  name?: string | undefined;
  subresource?: string | undefined;
}

/**
 * The request path: /api/v1/namespaces/ns/pods/name/status, /apis/g/v/nodeimages.
 * A namespaced type without a namespace addresses all namespaces (list/watch only).
 */
export function resourcePath(rt: ResourceType, parts: PathParts = {}): string {
  const prefix = rt.group
    ? `/apis/${checkSegment('group', rt.group, SEGMENT)}/${checkSegment('version', rt.version, SEGMENT)}`
    : `/api/${checkSegment('version', rt.version, SEGMENT)}`;
  let path = prefix;
  if (rt.namespaced && parts.namespace !== undefined) {
    path += `/namespaces/${checkSegment('namespace', parts.namespace, SEGMENT)}`;
  } else if (!rt.namespaced && parts.namespace) {
    throw new Error(`${resourceLabel(rt)} is cluster-scoped; no namespace may be given (got ${parts.namespace})`);
  }
  path += `/${checkSegment('resource', rt.resource, SEGMENT)}`;
  if (parts.name !== undefined) path += `/${checkSegment('name', parts.name, NAME_SEGMENT)}`;
  if (parts.subresource !== undefined) {
    if (parts.name === undefined) throw new Error('a subresource needs an object name');
    path += `/${checkSegment('subresource', parts.subresource, SEGMENT)}`;
  }
  return path;
}

/** The built-in types the agent and controller use. Custom types are plain ResourceType literals. */
export const CoreResources = {
  pods: { group: '', version: 'v1', resource: 'pods', namespaced: true, kind: 'Pod' },
  nodes: { group: '', version: 'v1', resource: 'nodes', namespaced: false, kind: 'Node' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces', namespaced: false, kind: 'Namespace' },
  configMaps: { group: '', version: 'v1', resource: 'configmaps', namespaced: true, kind: 'ConfigMap' },
  secrets: { group: '', version: 'v1', resource: 'secrets', namespaced: true, kind: 'Secret' },
  events: { group: '', version: 'v1', resource: 'events', namespaced: true, kind: 'Event' },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespaced: true, kind: 'Lease' },
} as const satisfies Record<string, ResourceType>;
