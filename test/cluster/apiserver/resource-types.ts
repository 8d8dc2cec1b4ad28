// The kinds registry: every served group/version/resource with its behaviour (validation, table, selectors, ...).
// Built-in kinds are registered at start; a CRD registers one entry per served version and removes them when deleted.
import type { FieldError } from './field-errors.js';
import type { NameValidator } from './builtin/names.js';
import type { TableConverter } from './table.js';
import type { KubeObject } from './types.js';

export type FieldGetter = (obj: KubeObject) => string | undefined;

/** What a kind's rules may look up in the rest of the cluster. */
export interface ClusterView {
  nodeExists(name: string): boolean;
}

/** What a kind does on writes; shared by all versions of a kind. */
export interface KindBehaviour {
  /** metadata.generation starts at 1 and grows when anything but metadata/status changes. */
  tracksGeneration: boolean;
  /** PUT without metadata.resourceVersion is allowed (built-ins) or rejected (custom resources). */
  allowUnconditionalUpdate: boolean;
  /** application/strategic-merge-patch+json is accepted (built-in kinds only). */
  strategicMerge: boolean;
  /** DELETE returns the deleted object (true) or a Success Status (false). */
  returnDeletedObject: boolean;
  nameErrors: NameValidator;
  /** Field selectors beyond metadata.name and metadata.namespace; evaluated on the stored object. */
  fieldSelectors: Record<string, FieldGetter>;
  /** Called on create after metadata is set (e.g. reset status, default fields). */
  prepareForCreate?(obj: KubeObject): void;
  /** Called on a main-resource update (not /status) after system metadata is restored. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /** Kind-specific validation of the stored form; `old` is set on updates. */
  validate?(obj: KubeObject, old: KubeObject | undefined): FieldError[];
  /** Seconds of grace a DELETE gives; 0 deletes at once (default). */
  deleteGracePeriod?(obj: KubeObject, requested: number | undefined, cluster: ClusterView): number;
  /** Extra condition before an object being deleted is removed (Namespace: spec.finalizers empty). */
  readyToRemove?(obj: KubeObject): boolean;
  /** Set when the object starts terminating (Namespace: status.phase=Terminating). */
  prepareForDelete?(obj: KubeObject): void;
}

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  /** Objects of all versions (and of aliases such as events.k8s.io Event) live under one storage key. */
  storageKey: string;
  /** Subresources served: status (spec/status split), binding (pods). */
  subresources: string[];
  verbs: string[];
  behaviour: KindBehaviour;
  table: TableConverter;
  /** Custom resources: the structural schema of this version (openAPIV3Schema). */
  schema?: unknown;
  /** Name of the CRD that defines this resource. */
  crdName?: string;
  /** Stored form → this version's form (returns a new object or the same one). */
  fromStorage(obj: KubeObject): KubeObject;
  /** This version's form → stored form. */
  toStorage(obj: KubeObject): KubeObject;
}

export const STANDARD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function gvrKey(group: string, version: string, plural: string): string {
  return `${group}/${version}/${plural}`;
}

export function hasStatus(rt: ResourceType): boolean {
  return rt.subresources.includes('status');
}

const VERSION_RE = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Kubernetes version priority: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > other names (alphabetical). */
export function compareVersions(a: string, b: string): number {
  const ma = VERSION_RE.exec(a);
  const mb = VERSION_RE.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const stage = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (stage(ma) !== stage(mb)) return stage(mb) - stage(ma);
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

export interface GroupInfo {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
}

export class ResourceRegistry {
  private readonly byGvr = new Map<string, ResourceType>();
  /** Storage version per storage key: the form objects are written in. */
  private readonly storageType = new Map<string, ResourceType>();

  register(types: ResourceType[], storageVersion?: ResourceType): void {
    for (const rt of types) this.byGvr.set(gvrKey(rt.group, rt.version, rt.plural), rt);
    const storage = storageVersion ?? (types[0] && this.storageType.get(types[0].storageKey)) ?? types[0];
    if (storage) this.storageType.set(storage.storageKey, storage);
  }

  /** Remove every resource of a storage key (a CRD was deleted or changed). */
  unregisterStorage(storageKey: string): void {
    for (const [key, rt] of this.byGvr) if (rt.storageKey === storageKey) this.byGvr.delete(key);
    this.storageType.delete(storageKey);
  }

  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byGvr.get(gvrKey(group, version, plural));
  }

  /** The type whose form objects of a storage key are stored in. */
  storageTypeOf(storageKey: string): ResourceType | undefined {
    return this.storageType.get(storageKey);
  }

  storageKeys(): string[] {
    return [...this.storageType.keys()];
  }

  all(): ResourceType[] {
    return [...this.byGvr.values()];
  }

  resourcesOf(group: string, version: string): ResourceType[] {
    return this.all().filter((rt) => rt.group === group && rt.version === version);
  }

  findKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.all().find((rt) => rt.group === group && rt.version === version && rt.kind === kind);
  }

  /** API groups (without the core group), each with served versions in preference order. */
  groups(): GroupInfo[] {
    const versions = new Map<string, Set<string>>();
    for (const rt of this.byGvr.values()) {
      if (rt.group === '') continue;
      let set = versions.get(rt.group);
      if (!set) versions.set(rt.group, (set = new Set()));
      set.add(rt.version);
    }
    return [...versions.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, set]) => ({ name, versions: [...set].sort(compareVersions) }));
  }
}
