// Discovery documents: legacy (/api, /apis, /apis/G, /apis/G/V, /api/v1) and aggregated (apidiscovery.k8s.io/v2,
// chosen by the Accept header; kubectl recognises it by the response Content-Type only).
import type { GroupInfo, ResourceRegistry, ResourceType } from './resource-types.js';
import { apiVersionOf } from './types.js';

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

/** The Content-Type of an aggregated discovery answer of a version (v2, v2beta1). */
export function aggregatedContentType(version: string): string {
  return version === 'v2beta1' ? AGGREGATED_V2BETA1 : AGGREGATED_V2;
}

function subresourceVerbs(sub: string): string[] {
  return sub === 'binding' ? ['create'] : ['get', 'patch', 'update'];
}

function subresourceKind(rt: ResourceType, sub: string): { group: string; version: string; kind: string } {
  return sub === 'binding'
    ? { group: '', version: 'v1', kind: 'Binding' }
    : { group: rt.group, version: rt.version, kind: rt.kind };
}

function aggregatedResource(rt: ResourceType): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    resource: rt.plural,
    responseKind: { group: rt.group, version: rt.version, kind: rt.kind },
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: rt.verbs,
  };
  if (rt.shortNames.length) entry.shortNames = rt.shortNames;
  if (rt.categories.length) entry.categories = rt.categories;
  if (rt.subresources.length) {
    entry.subresources = rt.subresources.map((sub) => ({
      subresource: sub,
      responseKind: subresourceKind(rt, sub),
      verbs: subresourceVerbs(sub),
    }));
  }
  return entry;
}

function sortedResources(list: ResourceType[]): ResourceType[] {
  return [...list].sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
}

function aggregatedVersions(registry: ResourceRegistry, group: string, versions: string[]): unknown[] {
  return versions.map((version) => ({
    version,
    resources: sortedResources(registry.resourcesOf(group, version)).map(aggregatedResource),
    freshness: 'Current',
  }));
}

/** GET /api or /apis in aggregated form. */
export function aggregatedDiscovery(registry: ResourceRegistry, legacy: boolean, version = 'v2'): unknown {
  const items = legacy
    ? [{ metadata: { creationTimestamp: null }, versions: aggregatedVersions(registry, '', ['v1']) }]
    : registry.groups().map((g) => ({
        metadata: { name: g.name, creationTimestamp: null },
        versions: aggregatedVersions(registry, g.name, g.versions),
      }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items };
}

export function legacyApiVersions(serverAddress: string): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDoc(g: GroupInfo): Record<string, unknown> {
  const versions = g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

export function legacyGroupList(registry: ResourceRegistry): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map(groupDoc) };
}

export function legacyGroup(registry: ResourceRegistry, group: string): unknown {
  const g = registry.groups().find((x) => x.name === group);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g) } : undefined;
}

export function legacyResourceList(registry: ResourceRegistry, group: string, version: string): unknown {
  const list = sortedResources(registry.resourcesOf(group, version));
  if (list.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const rt of list) {
    const entry: Record<string, unknown> = {
      name: rt.plural,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: rt.verbs,
    };
    if (rt.shortNames.length) entry.shortNames = rt.shortNames;
    if (rt.categories.length) entry.categories = rt.categories;
    resources.push(entry);
    for (const sub of rt.subresources) {
      const kind = subresourceKind(rt, sub);
      const subEntry: Record<string, unknown> = {
        name: `${rt.plural}/${sub}`,
        singularName: '',
        namespaced: rt.namespaced,
        kind: kind.kind,
        verbs: subresourceVerbs(sub),
      };
      if (kind.group !== rt.group || kind.version !== rt.version) {
        subEntry.group = kind.group;
        subEntry.version = kind.version;
      }
      resources.push(subEntry);
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources };
}
