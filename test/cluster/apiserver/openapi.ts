// OpenAPI v3, as much as kubectl needs: create/apply with --validate=strict look for the PATCH operation of the
// object's group/version/kind and, when it declares the `fieldValidation` parameter, leave validation to the
// server. Schemas: custom resources get their CRD version's openAPIV3Schema (kubectl explain works); built-in
// kinds get an open object. No operation declares strategic-merge request bodies, so kubectl builds its
// strategic merge patches from its compiled-in types. /openapi/v2 (protobuf only) is not served.
import type { ResourceRegistry, ResourceType } from './resource-types.js';

/** `api/v1`, `apis/apps/v1`, ... for every served group/version. */
export function openApiRoot(registry: ResourceRegistry): unknown {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  const gvs = new Set<string>(['api/v1']);
  for (const rt of registry.all()) gvs.add(rt.group === '' ? `api/${rt.version}` : `apis/${rt.group}/${rt.version}`);
  for (const gv of [...gvs].sort()) paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}` };
  return { paths };
}

/** Schema component name as kube-apiserver forms it: reversed group, version, kind. */
export function schemaName(rt: ResourceType): string {
  const group = rt.group === '' ? 'io.k8s.api.core' : rt.group.split('.').reverse().join('.');
  return `${group}.${rt.version}.${rt.kind}`;
}

const QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation'].map((name) => ({
  name,
  in: 'query',
  schema: { type: 'string', uniqueItems: true },
}));

function operation(rt: ResourceType, action: string, id: string): Record<string, unknown> {
  return {
    operationId: `${id}${rt.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: rt.group, version: rt.version, kind: rt.kind },
    parameters: action === 'get' || action === 'list' || action === 'delete' ? [] : QUERY_PARAMS,
    responses: {
      '200': { content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(rt)}` } } } },
    },
  };
}

function collectionPath(rt: ResourceType, base: string): string {
  return rt.namespaced ? `${base}/namespaces/{namespace}/${rt.plural}` : `${base}/${rt.plural}`;
}

function schemaFor(rt: ResourceType): Record<string, unknown> {
  const gvk = [{ group: rt.group, version: rt.version, kind: rt.kind }];
  if (rt.schema && typeof rt.schema === 'object') {
    return { ...(rt.schema as Record<string, unknown>), 'x-kubernetes-group-version-kind': gvk };
  }
  return {
    type: 'object',
    description: `${rt.kind} (served by the kruise-daemon API emulator; no field-level schema)`,
    'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-group-version-kind': gvk,
  };
}

/** GET /openapi/v3/api/v1 or /openapi/v3/apis/G/V; undefined when nothing is served there. */
export function openApiGroupVersion(registry: ResourceRegistry, group: string, version: string): unknown {
  const resources = registry.resourcesOf(group, version);
  if (resources.length === 0) return undefined;
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const rt of resources) {
    const collection = collectionPath(rt, base);
    paths[collection] = { get: operation(rt, 'list', 'list'), post: operation(rt, 'post', 'create') };
    paths[`${collection}/{name}`] = {
      get: operation(rt, 'get', 'read'),
      put: operation(rt, 'put', 'replace'),
      patch: operation(rt, 'patch', 'patch'),
      delete: operation(rt, 'delete', 'delete'),
    };
    if (rt.subresources.includes('status')) {
      paths[`${collection}/{name}/status`] = {
        get: operation(rt, 'get', 'read'),
        put: operation(rt, 'put', 'replace'),
        patch: { ...operation(rt, 'patch', 'patch'), 'x-kubernetes-group-version-kind': undefined },
      };
    }
    schemas[schemaName(rt)] = schemaFor(rt);
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas },
  };
}
