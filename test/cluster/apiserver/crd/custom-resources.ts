// A CustomResourceDefinition turned into served resources: one ResourceType per served version, all sharing
// one storage key; objects are stored in the storage version and converted by rewriting apiVersion
// (conversion strategy None).
import { dns1123SubdomainErrors } from '../builtin/names.js';
import { dig, str } from '../builtin/meta.js';
import { evaluateJsonPath, parseJsonPath } from '../jsonpath.js';
import { STANDARD_VERBS, type FieldGetter, type KindBehaviour, type ResourceType } from '../resource-types.js';
import { printerColumnsTable, type PrinterColumn } from '../table.js';
import { apiVersionOf, isPlainObject, type KubeObject } from '../types.js';

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema?: unknown;
  subresources: string[];
  printerColumns: PrinterColumn[];
  selectableFields: string[];
}

export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

export interface CrdSummary {
  name: string;
  group: string;
  names: CrdNames;
  namespaced: boolean;
  versions: CrdVersion[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Read the parts of a (validated, defaulted) CRD object the emulator uses. */
export function summarizeCrd(crd: KubeObject): CrdSummary {
  const spec = isPlainObject(crd.spec) ? crd.spec : {};
  const names = isPlainObject(spec.names) ? spec.names : {};
  const kind = str(names.kind) ?? '';
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  return {
    name: crd.metadata.name ?? '',
    group: str(spec.group) ?? '',
    namespaced: spec.scope !== 'Cluster',
    names: {
      plural: str(names.plural) ?? '',
      singular: str(names.singular) ?? kind.toLowerCase(),
      kind,
      listKind: str(names.listKind) ?? `${kind}List`,
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
    },
    versions: versions.filter(isPlainObject).map((v) => ({
      name: str(v.name) ?? '',
      served: v.served === true,
      storage: v.storage === true,
      schema: dig(v, 'schema', 'openAPIV3Schema'),
      subresources: isPlainObject(v.subresources) ? Object.keys(v.subresources).filter((s) => s === 'status') : [],
      printerColumns: (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [])
        .filter(isPlainObject)
        .map((c) => ({
          name: str(c.name) ?? '',
          type: str(c.type) ?? 'string',
          format: str(c.format),
          description: str(c.description),
          priority: typeof c.priority === 'number' ? c.priority : 0,
          jsonPath: str(c.jsonPath) ?? '',
        })),
      selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields : [])
        .map((f) => str(dig(f, 'jsonPath')))
        .filter((p): p is string => p !== undefined),
    })),
  };
}

export function storageKeyOf(crd: CrdSummary): string {
  return `${crd.group}/${crd.names.plural}`;
}

function selectableFieldGetters(paths: string[]): Record<string, FieldGetter> {
  const out: Record<string, FieldGetter> = {};
  for (const path of paths) {
    const steps = parseJsonPath(path);
    const name = path.startsWith('.') ? path.slice(1) : path;
    out[name] = (obj) => {
      const [first] = evaluateJsonPath(steps, obj);
      return first === undefined ? undefined : typeof first === 'string' ? first : JSON.stringify(first);
    };
  }
  return out;
}

/** ResourceTypes for every served version, and the storage version's type. */
export function customResourceTypes(crd: CrdSummary): { types: ResourceType[]; storage: ResourceType | undefined } {
  const storageVersion = crd.versions.find((v) => v.storage)?.name ?? crd.versions[0]?.name ?? '';
  const storageKey = storageKeyOf(crd);
  const storageApiVersion = apiVersionOf(crd.group, storageVersion);
  const build = (v: CrdVersion): ResourceType => {
    const behaviour: KindBehaviour = {
      tracksGeneration: true,
      allowUnconditionalUpdate: false,
      strategicMerge: false,
      returnDeletedObject: true,
      nameErrors: dns1123SubdomainErrors,
      fieldSelectors: selectableFieldGetters(v.selectableFields),
    };
    const apiVersion = apiVersionOf(crd.group, v.name);
    return {
      group: crd.group,
      version: v.name,
      kind: crd.names.kind,
      listKind: crd.names.listKind,
      plural: crd.names.plural,
      singular: crd.names.singular,
      shortNames: crd.names.shortNames,
      categories: crd.names.categories,
      namespaced: crd.namespaced,
      storageKey,
      subresources: v.subresources,
      verbs: STANDARD_VERBS,
      behaviour,
      table: printerColumnsTable(v.printerColumns),
      schema: v.schema,
      crdName: crd.name,
      fromStorage: (o) => (o.apiVersion === apiVersion ? o : { ...o, apiVersion }),
      toStorage: (o) => (o.apiVersion === storageApiVersion ? o : { ...o, apiVersion: storageApiVersion }),
    };
  };
  const types = crd.versions.filter((v) => v.served).map(build);
  const storageDef = crd.versions.find((v) => v.name === storageVersion);
  return { types, storage: storageDef ? build(storageDef) : undefined };
}
