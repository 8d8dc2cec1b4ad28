// PersistentPodState validation (admission and the controller's own check): OpenKruise's rules and messages
// (reference §4.2), plus the checks that keep a bad PPS from breaking the pods it would be injected into: node label
// keys and annotation keys must be valid keys, preferred weights must be 1-100 (what a pod's
// preferredDuringScheduling term accepts; OpenKruise lets 0 through and the recreated pod is then refused).
// Takes raw input: a malformed object yields field errors, never a throw.
import { fieldError, typeError } from './field-checks.js';
import type { FieldError } from './field-errors.js';
import { labelKeyError } from './label-selector.js';
import type { PersistentPodState, TargetReference } from './persistentpodstate.js';
import { isRecord } from '../util/is-record.js';

export const EMPTY_TARGET_REF_MESSAGE = 'empty targetRef is not valid for PersistentPodState.';
export const UNSUPPORTED_TARGET_MESSAGE =
  'targetRef.Kind must be StatefulSet (apiVersion apps/v1); Advanced StatefulSets and PPS_Watch_Custom_Workload_WhiteList workloads are not supported';
export const EMPTY_TOPOLOGY_MESSAGE = 'TopologyConstraint and TopologyPreference cannot be empty at the same time';
export const IMMUTABLE_TARGET_MESSAGE = 'targetRef is immutable';
export const MIN_PREFERRED_WEIGHT = 1;
export const MAX_PREFERRED_WEIGHT = 100;
const RETENTION_POLICIES = ['WhenScaled', 'WhenDeleted'];

export interface PersistentPodStateValidationOptions {
  /** On UPDATE: the stored object (targetRef may not change). */
  oldObject?: unknown;
  /** The other PersistentPodStates of the namespace (a workload may have one only). */
  others?: readonly PersistentPodState[];
}

/** The API group of an apiVersion: `apps/v1` → `apps`, `v1` → ``. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Same workload: same API group, kind and name (the version does not matter, as OpenKruise's IsReferenceEqual). */
export function sameTarget(a: TargetReference, b: TargetReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

/** A workload this controller follows: an apps/v1 StatefulSet. */
export function isSupportedTarget(ref: TargetReference): boolean {
  return ref.apiVersion === 'apps/v1' && ref.kind === 'StatefulSet';
}

function keyList(value: unknown, field: string, errors: FieldError[]): string[] {
  const bad = typeError(field, value, 'array');
  if (bad) {
    errors.push(bad);
    return [];
  }
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const [i, key] of ((value as unknown[] | undefined) ?? []).entries()) {
    const at = `${field}[${i}]`;
    if (typeof key !== 'string') {
      errors.push(fieldError('FieldValueTypeInvalid', at, 'must be a string (a node label key)'));
      continue;
    }
    checkLabelKey(key, at, seen, errors);
    keys.push(key);
  }
  return keys;
}

function targetRefOf(spec: Record<string, unknown>): TargetReference | undefined {
  const ref = spec.targetRef;
  if (!isRecord(ref)) return undefined;
  const { apiVersion, kind, name } = ref;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string') return undefined;
  if (!apiVersion || !kind || !name) return undefined;
  return { apiVersion, kind, name };
}

export function validatePersistentPodState(
  object: unknown,
  options: PersistentPodStateValidationOptions = {},
): FieldError[] {
  const errors: FieldError[] = [];
  const spec = isRecord(object) && isRecord(object.spec) ? object.spec : undefined;
  if (!spec) return [fieldError('FieldValueRequired', 'spec', 'Required value')];

  const target = targetRefOf(spec);
  if (!target) {
    errors.push(fieldError('FieldValueRequired', 'spec.targetRef', EMPTY_TARGET_REF_MESSAGE));
  } else if (!isSupportedTarget(target)) {
    errors.push(fieldError('FieldValueNotSupported', 'spec.targetRef', UNSUPPORTED_TARGET_MESSAGE));
  }

  let required: string[] = [];
  const requiredTerm = spec.requiredPersistentTopology;
  if (requiredTerm !== undefined && requiredTerm !== null) {
    if (!isRecord(requiredTerm)) errors.push(typeError('spec.requiredPersistentTopology', requiredTerm, 'object')!);
    else required = keyList(requiredTerm.nodeTopologyKeys, 'spec.requiredPersistentTopology.nodeTopologyKeys', errors);
  }

  let preferredKeys = 0;
  const preferred = spec.preferredPersistentTopology;
  const badPreferred = typeError('spec.preferredPersistentTopology', preferred, 'array');
  if (badPreferred) errors.push(badPreferred);
  else {
    for (const [i, term] of ((preferred as unknown[] | undefined) ?? []).entries()) {
      const at = `spec.preferredPersistentTopology[${i}]`;
      if (!isRecord(term)) {
        errors.push(fieldError('FieldValueTypeInvalid', at, 'must be an object with weight and preference'));
        continue;
      }
      const w = term.weight;
      if (typeof w !== 'number' || !Number.isInteger(w) || w < MIN_PREFERRED_WEIGHT || w > MAX_PREFERRED_WEIGHT) {
        errors.push(
          fieldError(
            'FieldValueInvalid',
            `${at}.weight`,
            `Invalid value: ${JSON.stringify(w)}: must be an integer in [${MIN_PREFERRED_WEIGHT}, ${MAX_PREFERRED_WEIGHT}] (a pod's preferred scheduling term weight)`,
          ),
        );
      }
      if (!isRecord(term.preference)) {
        errors.push(fieldError('FieldValueRequired', `${at}.preference`, 'Required value'));
        continue;
      }
      preferredKeys += keyList(term.preference.nodeTopologyKeys, `${at}.preference.nodeTopologyKeys`, errors).length;
    }
  }
  if (required.length === 0 && preferredKeys === 0) {
    errors.push(fieldError('FieldValueRequired', 'spec', EMPTY_TOPOLOGY_MESSAGE));
  }

  const annotations = spec.persistentPodAnnotations;
  const badAnnotations = typeError('spec.persistentPodAnnotations', annotations, 'array');
  if (badAnnotations) errors.push(badAnnotations);
  else {
    const seen = new Set<string>();
    for (const [i, entry] of ((annotations as unknown[] | undefined) ?? []).entries()) {
      const at = `spec.persistentPodAnnotations[${i}].key`;
      const key = isRecord(entry) ? entry.key : undefined;
      if (typeof key !== 'string' || key === '') {
        errors.push(fieldError('FieldValueRequired', at, 'Required value'));
        continue;
      }
      checkLabelKey(key, at, seen, errors);
    }
  }

  const policy = spec.persistentPodStateRetentionPolicy;
  if (policy !== undefined && policy !== null && policy !== '' && !RETENTION_POLICIES.includes(policy as string)) {
    errors.push(
      fieldError(
        'FieldValueNotSupported',
        'spec.persistentPodStateRetentionPolicy',
        `Unsupported value: ${JSON.stringify(policy)}: supported values: "WhenScaled", "WhenDeleted"`,
      ),
    );
  }

  const old = options.oldObject;
  if (old !== undefined && isRecord(old) && isRecord(old.spec)) {
    const before = targetRefOf(old.spec);
    if (before && (!target || JSON.stringify(before) !== JSON.stringify(target))) {
      errors.push(fieldError('FieldValueForbidden', 'spec.targetRef', `Forbidden: ${IMMUTABLE_TARGET_MESSAGE}`));
    }
  }

  if (target) {
    const name = isRecord(object) && isRecord(object.metadata) ? object.metadata.name : undefined;
    for (const other of options.others ?? []) {
      if (other.metadata?.name === name || other.metadata?.deletionTimestamp) continue;
      const ref = other.spec?.targetRef;
      if (ref && sameTarget(ref, target)) {
        errors.push(
          fieldError(
            'FieldValueInvalid',
            'spec.targetRef',
            `targetRef is in conflict with other PersistentPodState ${other.metadata?.name ?? ''}`,
          ),
        );
        break;
      }
    }
  }
  return errors;
}

/** A label key must be valid and not repeat one in `seen` (it is added there). */
function checkLabelKey(key: string, at: string, seen: Set<string>, errors: FieldError[]): void {
  const why = labelKeyError(key);
  if (why) errors.push(fieldError('FieldValueInvalid', at, `Invalid value: ${JSON.stringify(key)}: ${why}`));
  else if (seen.has(key)) errors.push(fieldError('FieldValueDuplicate', at, `Duplicate value: ${JSON.stringify(key)}`));
  seen.add(key);
}
