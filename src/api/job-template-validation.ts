// Checks shared by ImagePullJob and ImageListPullJob validation (the ImagePullJobTemplate part):
// node/pod selectors, parallelism, completion policy, pull policy and the shapes of the remaining fields.
// Messages are OpenKruise's webhook messages where it has a rule, with the value given. Our additions:
// pullPolicy.timeoutSeconds > 0, backoffLimit >= 0, completionPolicy.activeDeadlineSeconds > 0 and
// ttlSecondsAfterFinished >= 0 (OpenKruise admits them; docs/image-pull.md says what it then does).

import { COMPLETION_POLICY_TYPES, IMAGE_PULL_POLICIES } from './constants.js';
import { childPath, indexPath, type FieldError } from './field-errors.js';
import {
  belowMinimumError,
  fieldError,
  jsonTypeName,
  notSupportedError,
  typeError,
  type JsonObject,
} from './field-checks.js';
import { labelSelectorErrors } from './label-selector.js';
import { validateSandboxConfig } from './nodeimage-validation.js';
import { isRecord } from '../util/is-record.js';

/** The lowest value of each whole-number field (0: non-negative, 1: positive). A pull needs some time. */
const PULL_POLICY_MINIMUMS = { timeoutSeconds: 1, backoffLimit: 0 } as const;
const COMPLETION_MINIMUMS = { activeDeadlineSeconds: 1, ttlSecondsAfterFinished: 0 } as const;

/** A job's spec when the job and its spec are objects; otherwise the one error saying which is not. */
export function jobSpecOf(kind: string, job: unknown): { spec: JsonObject } | { errors: FieldError[] } {
  if (!isRecord(job)) {
    return {
      errors: [fieldError('FieldValueTypeInvalid', '<nil>', `${kind} must be an object, got ${jsonTypeName(job)}`)],
    };
  }
  const spec = job['spec'];
  if (isRecord(spec)) return { spec };
  return {
    errors: [typeError('spec', spec, 'object') ?? fieldError('FieldValueRequired', 'spec', 'spec must be set')],
  };
}

/**
 * The template part of a job, in OpenKruise's order: selectors, then the kind's own image checks (given), parallelism,
 * the shapes of the other fields, the completion policy.
 */
export function validateJobTemplate(
  spec: JsonObject,
  imageErrors: readonly FieldError[],
  options: JobValidationOptions,
): FieldError[] {
  return [
    ...validateSelectors(spec),
    ...imageErrors,
    ...validateParallelism(spec['parallelism']),
    ...validateTemplateShapes(spec, options),
    ...validateCompletionPolicy(spec, options),
  ];
}

/** What validation needs to know of the job before this update; absent on create. */
export interface JobValidationOptions {
  oldObject?: unknown;
}

/** `spec.<policy>.<key>` of the stored job, or undefined. */
function oldValue(options: JobValidationOptions, policy: string, key: string): unknown {
  const oldSpec = isRecord(options.oldObject) ? options.oldObject['spec'] : undefined;
  const oldPolicy = isRecord(oldSpec) ? oldSpec[policy] : undefined;
  return isRecord(oldPolicy) ? oldPolicy[key] : undefined;
}

/**
 * The bound of a whole-number field, ratcheted as kube-apiserver ratchets CRD schemas: on update a value the job
 * already had is let through, so a job admitted before the bounds existed can still get and lose its finalizer.
 */
function boundError(field: string, value: unknown, minimum: 0 | 1, previous: unknown): FieldError | undefined {
  if (previous !== undefined && previous === value) return undefined;
  return belowMinimumError(field, value, minimum);
}

/** selector / podSelector rules. */
function validateSelectors(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const selector = spec['selector'];
  const podSelector = spec['podSelector'];
  const selectorError = typeError('spec.selector', selector, 'object');
  if (selectorError) errors.push(selectorError);
  if (isRecord(selector)) {
    const names = selector['names'];
    const hasLabelRules = nonEmpty(selector['matchLabels']) || nonEmpty(selector['matchExpressions']);
    const namesError = typeError('spec.selector.names', names, 'array');
    if (namesError) errors.push(namesError);
    if (Array.isArray(names) && names.length > 0 && hasLabelRules) {
      errors.push(
        fieldError(
          'FieldValueInvalid',
          'spec.selector',
          'can not set both names and labelSelector in this spec.selector',
        ),
      );
    }
    const problems = labelSelectorErrors(selector);
    if (problems.length > 0) {
      errors.push(fieldError('FieldValueInvalid', 'spec.selector', `invalid selector: ${problems.join(', ')}`));
    }
    if (Array.isArray(names)) {
      const seen = new Set<unknown>();
      names.forEach((name: unknown, index) => {
        const path = indexPath('spec.selector.names', index);
        const nameError = typeError(path, name, 'string');
        if (nameError) errors.push(nameError);
        if (seen.has(name)) {
          errors.push(fieldError('FieldValueDuplicate', path, 'duplicated name in selector names', name));
        }
        seen.add(name);
      });
    }
  }
  const podSelectorError = typeError('spec.podSelector', podSelector, 'object');
  if (podSelectorError) errors.push(podSelectorError);
  if (isRecord(podSelector)) {
    if (selector !== undefined && selector !== null) {
      errors.push(fieldError('FieldValueInvalid', 'spec.podSelector', 'can not set both selector and podSelector'));
    }
    const problems = labelSelectorErrors(podSelector);
    if (problems.length > 0) {
      errors.push(fieldError('FieldValueInvalid', 'spec.podSelector', `invalid podSelector: ${problems.join(', ')}`));
    }
  }
  return errors;
}

/** Non-negative integer, or a string holding one (no percentages). */
function validateParallelism(parallelism: unknown): FieldError[] {
  const path = 'spec.parallelism';
  if (parallelism === undefined || parallelism === null) return [];
  const negative = [fieldError('FieldValueInvalid', path, 'parallelism must be non-negative', parallelism)];
  if (typeof parallelism === 'number') {
    if (!Number.isInteger(parallelism))
      return [fieldError('FieldValueTypeInvalid', path, 'parallelism must be an integer', parallelism)];
    return parallelism < 0 ? negative : [];
  }
  if (typeof parallelism !== 'string') {
    return [
      fieldError('FieldValueTypeInvalid', path, 'parallelism must be an integer or a string holding one', parallelism),
    ];
  }
  if (parallelism.endsWith('%')) {
    return [fieldError('FieldValueInvalid', path, 'parallelism does not support percentage value', parallelism)];
  }
  const parsed = parseInt32(parallelism);
  if (typeof parsed === 'string') {
    return [fieldError('FieldValueInvalid', path, `parallelism must be a valid integer: ${parsed}`)];
  }
  return parsed < 0 ? negative : [];
}

/**
 * completionPolicy: activeDeadlineSeconds > 0 and ttlSecondsAfterFinished >= 0; `Never` takes neither
 * (one error per field set); other types are not supported. A missing type counts as `Always` (its
 * default). ImagePullJob adds the deadline-versus-timeout check itself.
 */
function validateCompletionPolicy(spec: JsonObject, options: JobValidationOptions = {}): FieldError[] {
  const path = 'spec.completionPolicy';
  const policy = spec['completionPolicy'];
  const shapeError = typeError(path, policy, 'object');
  if (shapeError) return [shapeError];
  if (!isRecord(policy)) return [];
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  const type = policy['type'];
  add(typeError(childPath(path, 'type'), type, 'string'));
  add(notSupportedError(childPath(path, 'type'), type, COMPLETION_POLICY_TYPES));
  for (const [key, minimum] of Object.entries(COMPLETION_MINIMUMS)) {
    const field = childPath(path, key);
    const value = policy[key];
    const previous = oldValue(options, 'completionPolicy', key);
    const error = typeError(field, value, 'integer') ?? boundError(field, value, minimum, previous);
    if (error) errors.push(error);
    else if (type === 'Never' && present(value)) {
      errors.push(
        fieldError(
          'FieldValueInvalid',
          field,
          'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType',
          value,
        ),
      );
    }
  }
  return errors;
}

/** Shapes of pullSecrets, pullPolicy (and its numbers' minimums), sandboxConfig and imagePullPolicy. */
function validateTemplateShapes(spec: JsonObject, options: JobValidationOptions = {}): FieldError[] {
  const errors: FieldError[] = [];
  const add = (error: FieldError | undefined): void => {
    if (error) errors.push(error);
  };
  const secrets = spec['pullSecrets'];
  add(typeError('spec.pullSecrets', secrets, 'array'));
  if (Array.isArray(secrets)) {
    secrets.forEach((secret: unknown, index) => add(typeError(indexPath('spec.pullSecrets', index), secret, 'string')));
  }
  const pullPolicy = spec['pullPolicy'];
  add(typeError('spec.pullPolicy', pullPolicy, 'object'));
  if (isRecord(pullPolicy)) {
    for (const [key, minimum] of Object.entries(PULL_POLICY_MINIMUMS)) {
      const field = childPath('spec.pullPolicy', key);
      const previous = oldValue(options, 'pullPolicy', key);
      add(typeError(field, pullPolicy[key], 'integer') ?? boundError(field, pullPolicy[key], minimum, previous));
    }
  }
  errors.push(...validateSandboxConfig(spec['sandboxConfig'], 'spec.sandboxConfig'));
  const imagePullPolicy = spec['imagePullPolicy'];
  add(typeError('spec.imagePullPolicy', imagePullPolicy, 'string'));
  add(notSupportedError('spec.imagePullPolicy', imagePullPolicy, IMAGE_PULL_POLICIES));
  return errors;
}

/** Go's strconv.ParseInt(s, 10, 32): the value, or its error text. */
function parseInt32(text: string): number | string {
  if (!/^[+-]?[0-9]+$/.test(text)) return `strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`;
  const value = Number(text);
  if (value > 2147483647 || value < -2147483648) {
    return `strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`;
  }
  return value;
}

function nonEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return isRecord(value) && Object.keys(value).length > 0;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}
