// Strategic merge patch metadata of the built-in Kubernetes types: which lists merge, and by which key.
// Transcribed from the `patchStrategy` / `patchMergeKey` struct tags of k8s.io/api (core/v1, apps/v1, batch/v1,
// policy/v1) and k8s.io/apimachinery (metav1.ObjectMeta, metav1.Condition), as published in the OpenAPI
// extensions `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`. Fields not listed have no patch
// metadata: their lists are replaced whole, their maps merged key by key.

/** Patch metadata of one field. For a list, `type` describes each element; for a map, the map itself. */
export interface FieldPatchMeta {
  /** The field's `patchStrategy` tag. Lists merge only with `merge`; `retainKeys` is the client's concern. */
  readonly patchStrategy?: 'merge' | 'merge,retainKeys' | 'retainKeys' | 'replace';
  /** The field's `patchMergeKey` tag: the member that identifies an element of a merged list of objects. */
  readonly patchMergeKey?: string;
  /** The name (in TYPES) of the struct the value, or each element, is. */
  readonly type?: string | undefined;
}

/** The fields of one struct type that have patch metadata or lead to a struct that has. */
export type StructPatchMeta = Readonly<Record<string, FieldPatchMeta>>;

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

const byName = (type?: string): FieldPatchMeta => ({ patchStrategy: 'merge', patchMergeKey: 'name', type });
const byType: FieldPatchMeta = { patchStrategy: 'merge', patchMergeKey: 'type' };
const byIp: FieldPatchMeta = { patchStrategy: 'merge', patchMergeKey: 'ip' };
const conditionsOnly: StructPatchMeta = { conditions: byType };

const TYPES: Readonly<Record<string, StructPatchMeta>> = {
  // metav1.ObjectMeta
  ObjectMeta: {
    ownerReferences: { patchStrategy: 'merge', patchMergeKey: 'uid' },
    finalizers: { patchStrategy: 'merge' },
  },
  // core/v1
  PodSpec: {
    volumes: { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' },
    initContainers: byName('Container'),
    containers: byName('Container'),
    ephemeralContainers: byName('Container'), // EphemeralContainerCommon has Container's tags
    imagePullSecrets: byName(),
    hostAliases: { patchStrategy: 'merge', patchMergeKey: 'ip' },
    topologySpreadConstraints: { patchStrategy: 'merge', patchMergeKey: 'topologyKey' },
    schedulingGates: byName(),
    resourceClaims: { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' },
    // tolerations, readinessGates, resizePolicy, envFrom: no strategy (replace)
  },
  Container: {
    ports: { patchStrategy: 'merge', patchMergeKey: 'containerPort' },
    env: byName(),
    volumeMounts: { patchStrategy: 'merge', patchMergeKey: 'mountPath' },
    volumeDevices: { patchStrategy: 'merge', patchMergeKey: 'devicePath' },
  },
  PodStatus: {
    conditions: byType,
    podIPs: byIp,
    hostIPs: byIp,
    resourceClaimStatuses: { patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' },
    // containerStatuses, initContainerStatuses, ephemeralContainerStatuses: no strategy (replace)
  },
  PodTemplateSpec: { metadata: { type: 'ObjectMeta' }, spec: { type: 'PodSpec' } },
  NodeSpec: { podCIDRs: { patchStrategy: 'merge' } },
  NodeStatus: {
    conditions: byType,
    addresses: { patchStrategy: 'merge', patchMergeKey: 'type' },
    // images, volumesInUse, volumesAttached: no strategy (replace)
  },
  ServiceSpec: { ports: { patchStrategy: 'merge', patchMergeKey: 'port' } },
  ConditionsStatus: conditionsOnly,
  WithPodTemplate: { template: { type: 'PodTemplateSpec' } },
  // batch/v1
  JobTemplateSpec: { metadata: { type: 'ObjectMeta' }, spec: { type: 'WithPodTemplate' } },
  CronJobSpec: { jobTemplate: { type: 'JobTemplateSpec' } },
};

const meta = (fields: Record<string, string>, extra: StructPatchMeta = {}): StructPatchMeta => {
  const root: Record<string, FieldPatchMeta> = { metadata: { type: 'ObjectMeta' } };
  for (const [field, type] of Object.entries(fields)) root[field] = { type };
  return { ...root, ...extra };
};

/** Root types per `group/Kind` (the version does not change patch metadata). */
const KINDS: Readonly<Record<string, StructPatchMeta>> = {
  '/Pod': meta({ spec: 'PodSpec', status: 'PodStatus' }),
  '/PodTemplate': meta({ template: 'PodTemplateSpec' }),
  '/ReplicationController': meta({ spec: 'WithPodTemplate', status: 'ConditionsStatus' }),
  '/Node': meta({ spec: 'NodeSpec', status: 'NodeStatus' }),
  '/Service': meta({ spec: 'ServiceSpec', status: 'ConditionsStatus' }),
  '/ServiceAccount': meta({}, { secrets: byName() }),
  '/Namespace': meta({ status: 'ConditionsStatus' }),
  '/PersistentVolumeClaim': meta({ status: 'ConditionsStatus' }),
  'apps/Deployment': meta({ spec: 'WithPodTemplate', status: 'ConditionsStatus' }),
  'apps/StatefulSet': meta({ spec: 'WithPodTemplate', status: 'ConditionsStatus' }),
  'apps/DaemonSet': meta({ spec: 'WithPodTemplate', status: 'ConditionsStatus' }),
  'apps/ReplicaSet': meta({ spec: 'WithPodTemplate', status: 'ConditionsStatus' }),
  'batch/Job': meta({ spec: 'WithPodTemplate', status: 'ConditionsStatus' }),
  'batch/CronJob': meta({ spec: 'CronJobSpec' }),
  'policy/PodDisruptionBudget': meta({ status: 'ConditionsStatus' }),
};

/** Every kind of a built-in group without an entry above still has ObjectMeta's merge lists. */
const METADATA_ONLY = meta({});

/** The API groups kube-apiserver serves from compiled-in types; strategic merge patch works only for those. */
const BUILTIN_GROUPS: ReadonlySet<string> = new Set([
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/**
 * Whether kube-apiserver accepts application/strategic-merge-patch+json for this kind: built-in groups yes,
 * custom resources (any other group) no; the emulator answers 415 for those.
 */
export function supportsStrategicMerge(gvk: GroupVersionKind): boolean {
  return BUILTIN_GROUPS.has(gvk.group);
}

/** The root patch metadata of a kind, or undefined for kinds without any (all their lists are replaced). */
export function rootPatchMeta(gvk: GroupVersionKind): StructPatchMeta | undefined {
  if (!supportsStrategicMerge(gvk)) return undefined;
  return KINDS[`${gvk.group}/${gvk.kind}`] ?? METADATA_ONLY;
}

/** The metadata of the struct a field leads to. */
export function structOf(field: FieldPatchMeta | undefined): StructPatchMeta | undefined {
  return field?.type === undefined ? undefined : TYPES[field.type];
}
