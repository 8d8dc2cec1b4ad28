// The kinds an install of kruise-daemon creates besides those the agents and tests use: RBAC (Role, ClusterRole and
// their bindings), Service, DaemonSet and PodDisruptionBudget. Stored and validated for what a manifest gets wrong
// most (references, selectors, ports), so that deploy/'s rendered overlays can be checked against the emulator
// (test/e2e/operate/overlays.test.ts). No controller acts on them.
import { fieldError, fieldPath, type FieldError } from '../field-errors.js';
import { labelSelectorErrors, labelSelectorObjectMatches } from '../selectors.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { builtinResource, dig, ensureObject } from './meta.js';

const RBAC = 'rbac.authorization.k8s.io';

function rulesErrors(o: KubeObject): FieldError[] {
  const rules = o.rules;
  if (rules === undefined || rules === null) return [];
  if (!Array.isArray(rules)) return [fieldError.typeInvalid('rules', rules, 'must be a list')];
  const errs: FieldError[] = [];
  rules.forEach((rule, i) => {
    const path = fieldPath.index('rules', i);
    if (!isPlainObject(rule)) {
      errs.push(fieldError.typeInvalid(path, rule, 'must be an object'));
      return;
    }
    const verbs = rule.verbs;
    if (!Array.isArray(verbs) || verbs.length === 0)
      errs.push(fieldError.required(`${path}.verbs`, 'verbs must contain at least one value'));
    const urls = Array.isArray(rule.nonResourceURLs) && rule.nonResourceURLs.length > 0;
    if (!urls) {
      if (!Array.isArray(rule.apiGroups) || rule.apiGroups.length === 0) {
        errs.push(fieldError.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
      }
      if (!Array.isArray(rule.resources) || rule.resources.length === 0) {
        errs.push(fieldError.required(`${path}.resources`, 'resource rules must supply at least one resource'));
      }
    } else if (o.kind === 'Role') {
      errs.push(
        fieldError.invalid(
          `${path}.nonResourceURLs`,
          rule.nonResourceURLs,
          'namespaced rules cannot apply to non-resource URLs',
        ),
      );
    }
    for (const key of ['verbs', 'apiGroups', 'resources', 'resourceNames'] as const) {
      const list = rule[key];
      if (list !== undefined && (!Array.isArray(list) || list.some((v) => typeof v !== 'string'))) {
        errs.push(fieldError.typeInvalid(`${path}.${key}`, list, 'must be a list of strings'));
      }
    }
  });
  return errs;
}

function bindingErrors(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const ref = o.roleRef;
  if (!isPlainObject(ref)) {
    errs.push(fieldError.required('roleRef'));
  } else {
    if (ref.apiGroup !== RBAC) errs.push(fieldError.notSupported('roleRef.apiGroup', ref.apiGroup, [RBAC]));
    const kinds = o.kind === 'RoleBinding' ? ['Role', 'ClusterRole'] : ['ClusterRole'];
    if (typeof ref.kind !== 'string' || !kinds.includes(ref.kind))
      errs.push(fieldError.notSupported('roleRef.kind', ref.kind, kinds));
    if (typeof ref.name !== 'string' || ref.name === '') errs.push(fieldError.required('roleRef.name'));
  }
  const subjects = o.subjects;
  if (subjects !== undefined && !Array.isArray(subjects))
    return [...errs, fieldError.typeInvalid('subjects', subjects, 'must be a list')];
  (Array.isArray(subjects) ? subjects : []).forEach((s, i) => {
    const path = fieldPath.index('subjects', i);
    if (!isPlainObject(s)) {
      errs.push(fieldError.typeInvalid(path, s, 'must be an object'));
      return;
    }
    if (!['ServiceAccount', 'User', 'Group'].includes(String(s.kind))) {
      errs.push(fieldError.notSupported(`${path}.kind`, s.kind, ['ServiceAccount', 'User', 'Group']));
    }
    if (typeof s.name !== 'string' || s.name === '') errs.push(fieldError.required(`${path}.name`));
    if (s.kind === 'ServiceAccount' && o.kind === 'ClusterRoleBinding' && !s.namespace) {
      errs.push(fieldError.required(`${path}.namespace`));
    }
  });
  return errs;
}

function portNumberOk(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535;
}

function serviceErrors(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const ports = dig(o, 'spec', 'ports');
  if (!Array.isArray(ports) || ports.length === 0) return [fieldError.required('spec.ports')];
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const path = fieldPath.index('spec.ports', i);
    if (!isPlainObject(p)) {
      errs.push(fieldError.typeInvalid(path, p, 'must be an object'));
      return;
    }
    if (!portNumberOk(p.port))
      errs.push(fieldError.invalid(`${path}.port`, p.port, 'must be between 1 and 65535, inclusive'));
    const target = p.targetPort;
    if (target !== undefined && typeof target !== 'string' && !portNumberOk(target)) {
      errs.push(fieldError.invalid(`${path}.targetPort`, target, 'must be between 1 and 65535, inclusive'));
    }
    if (ports.length > 1 && !p.name) errs.push(fieldError.required(`${path}.name`));
    if (typeof p.name === 'string') {
      if (names.has(p.name)) errs.push(fieldError.duplicate(`${path}.name`, p.name));
      names.add(p.name);
    }
  });
  return errs;
}

function daemonSetErrors(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const selector = dig(o, 'spec', 'selector');
  if (!isPlainObject(selector)) {
    errs.push(fieldError.required('spec.selector'));
  } else {
    errs.push(...labelSelectorErrors(selector, 'spec.selector'));
    const labels = dig(o, 'spec', 'template', 'metadata', 'labels');
    if (!labelSelectorObjectMatches(selector, isPlainObject(labels) ? (labels as Record<string, string>) : {})) {
      errs.push(
        fieldError.invalid(
          'spec.template.metadata.labels',
          labels ?? {},
          '`selector` does not match template `labels`',
        ),
      );
    }
    if (old && JSON.stringify(dig(old, 'spec', 'selector')) !== JSON.stringify(selector)) {
      errs.push(fieldError.invalid('spec.selector', selector, 'field is immutable'));
    }
  }
  const containers = dig(o, 'spec', 'template', 'spec', 'containers');
  if (!Array.isArray(containers) || containers.length === 0)
    errs.push(fieldError.required('spec.template.spec.containers'));
  return errs;
}

function pdbErrors(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = o.spec;
  if (!isPlainObject(spec)) return [fieldError.required('spec')];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    errs.push(fieldError.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const key of ['minAvailable', 'maxUnavailable'] as const) {
    const v = spec[key];
    if (v === undefined) continue;
    const ok = (typeof v === 'number' && Number.isInteger(v) && v >= 0) || (typeof v === 'string' && /^\d+%$/.test(v));
    if (!ok) errs.push(fieldError.invalid(`spec.${key}`, v, 'must be a non-negative integer or a percentage'));
  }
  if (spec.selector !== undefined) {
    if (isPlainObject(spec.selector)) errs.push(...labelSelectorErrors(spec.selector, 'spec.selector'));
    else errs.push(fieldError.typeInvalid('spec.selector', spec.selector, 'must be a label selector'));
  }
  return errs;
}

const rbac = (kind: string, plural: string, namespaced: boolean, validate: (o: KubeObject) => FieldError[]) =>
  builtinResource({ group: RBAC, version: 'v1', kind, plural, namespaced, behaviour: { validate } });

export const roleResource = rbac('Role', 'roles', true, rulesErrors);
export const clusterRoleResource = rbac('ClusterRole', 'clusterroles', false, rulesErrors);
export const roleBindingResource = rbac('RoleBinding', 'rolebindings', true, bindingErrors);
export const clusterRoleBindingResource = rbac('ClusterRoleBinding', 'clusterrolebindings', false, bindingErrors);

export const serviceResource = builtinResource({
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: ['status'],
  behaviour: {
    prepareForCreate(o) {
      const spec = ensureObject(o, 'spec');
      spec.type ??= 'ClusterIP';
      if (Array.isArray(spec.ports)) {
        for (const p of spec.ports) if (isPlainObject(p)) p.protocol ??= 'TCP';
      }
    },
    validate: serviceErrors,
  },
});

export const daemonSetResource = builtinResource({
  group: 'apps',
  version: 'v1',
  kind: 'DaemonSet',
  plural: 'daemonsets',
  namespaced: true,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: ['status'],
  behaviour: {
    tracksGeneration: true,
    prepareForCreate(o) {
      const spec = ensureObject(o, 'spec');
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
      spec.revisionHistoryLimit ??= 10;
      o.status = { currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 };
    },
    validate: daemonSetErrors,
  },
});

export const podDisruptionBudgetResource = builtinResource({
  group: 'policy',
  version: 'v1',
  kind: 'PodDisruptionBudget',
  plural: 'poddisruptionbudgets',
  namespaced: true,
  shortNames: ['pdb'],
  subresources: ['status'],
  behaviour: { tracksGeneration: true, validate: pdbErrors },
});

export const installKindResources = [
  roleResource,
  clusterRoleResource,
  roleBindingResource,
  clusterRoleBindingResource,
  serviceResource,
  daemonSetResource,
  podDisruptionBudgetResource,
];
