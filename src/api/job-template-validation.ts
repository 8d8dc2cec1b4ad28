// Checks shared by ImagePullJob and ImageListPullJob validation (the ImagePullJobTemplate part):
// node/pod selectors, parallelism, completion policy and the shapes of the remaining fields.
// Messages are OpenKruise's webhook messages.

import { childPath, indexPath, type FieldError } from './field-errors.js';
import { fieldError, isObject, typeError, type JsonObject } from './field-checks.js';
import { labelSelectorErrors } from './label-selector.js';
import { validateSandboxConfig } from './nodeimage-validation.js';

const PULL_POLICIES = ['Always', 'IfNotPresent'];

/** selector / podSelector rules. */
export function validateSelectors(spec: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const selector = spec['selector'];
  const podSelector = spec['podSelector'];
  const selectorError = typeError('spec.selector', selector, 'object');
  if (selectorError) errors.push(selectorError);
  if (isObject(selector)) {
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
        if (seen.has(name)) errors.push(fieldError('FieldValueDuplicate', path, 'duplicated name in selector names'));
        seen.add(name);
      });
    }
  }
  const podSelectorError = typeError('spec.podSelector', podSelector, 'object');
  if (podSelectorError) errors.push(podSelectorError);
  if (isObject(podSelector)) {
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
export function validateParallelism(parallelism: unknown): FieldError[] {
  const path = 'spec.parallelism';
  if (parallelism === undefined || parallelism === null) return [];
  if (typeof parallelism === 'number') {
    if (!Number.isInteger(parallelism))
      return [fieldError('FieldValueTypeInvalid', path, 'parallelism must be an integer')];
    return parallelism < 0 ? [fieldError('FieldValueInvalid', path, 'parallelism must be non-negative')] : [];
  }
  if (typeof parallelism !== 'string') {
    return [fieldError('FieldValueTypeInvalid', path, 'parallelism must be an integer or a string holding one')];
  }
  if (parallelism.endsWith('%')) {
    return [fieldError('FieldValueInvalid', path, 'parallelism does not support percentage value')];
  }
  const parsed = parseInt32(parallelism);
  if (typeof parsed === 'string') {
    return [fieldError('FieldValueInvalid', path, `parallelism must be a valid integer: ${parsed}`)];
  }
  return parsed < 0 ? [fieldError('FieldValueInvalid', path, 'parallelism must be non-negative')] : [];
}

/**
 * completionPolicy: `Never` takes neither activeDeadlineSeconds nor ttlSecondsAfterFinished; other
 * types are unknown. A missing type counts as `Always` (its default). ImagePullJob adds the
 * deadline-versus-timeout check itself.
 */
export function validateCompletionPolicy(spec: JsonObject): FieldError[] {
  const path = 'spec.completionPolicy';
  const policy = spec['completionPolicy'];
  const shapeError = typeError(path, policy, 'object');
  if (shapeError) return [shapeError];
  if (!isObject(policy)) return [];
  const errors: FieldError[] = [];
  for (const key of ['activeDeadlineSeconds', 'ttlSecondsAfterFinished']) {
    const error = typeError(childPath(path, key), policy[key], 'integer');
    if (error) errors.push(error);
  }
  const type = policy['type'];
  if (type === undefined || type === null || type === '' || type === 'Always') return errors;
  if (type === 'Never') {
    if (present(policy['activeDeadlineSeconds']) || present(policy['ttlSecondsAfterFinished'])) {
      errors.push(
        fieldError(
          'FieldValueInvalid',
          path,
          'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType',
        ),
      );
    }
    return errors;
  }
  errors.push(
    fieldError('FieldValueNotSupported', childPath(path, 'type'), `unknown type of completionPolicy: ${String(type)}`),
  );
  return errors;
}

/** Shapes of pullSecrets, pullPolicy, sandboxConfig and imagePullPolicy. */
export function validateTemplateShapes(spec: JsonObject): FieldError[] {
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
  if (isObject(pullPolicy)) {
    add(typeError('spec.pullPolicy.timeoutSeconds', pullPolicy['timeoutSeconds'], 'integer'));
    add(typeError('spec.pullPolicy.backoffLimit', pullPolicy['backoffLimit'], 'integer'));
  }
  errors.push(...validateSandboxConfig(spec['sandboxConfig'], 'spec.sandboxConfig'));
  const imagePullPolicy = spec['imagePullPolicy'];
  add(typeError('spec.imagePullPolicy', imagePullPolicy, 'string'));
  if (typeof imagePullPolicy === 'string' && imagePullPolicy !== '' && !PULL_POLICIES.includes(imagePullPolicy)) {
    errors.push(
      fieldError(
        'FieldValueNotSupported',
        'spec.imagePullPolicy',
        `imagePullPolicy ${JSON.stringify(imagePullPolicy)} is not supported: use Always or IfNotPresent`,
      ),
    );
  }
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
  return isObject(value) && Object.keys(value).length > 0;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}
