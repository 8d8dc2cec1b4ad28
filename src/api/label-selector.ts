// metav1.LabelSelector: validation with the messages Kubernetes gives, and matching against labels.
// An empty selector ({}) matches everything; a missing one is the caller's decision.

import type { LabelSelector, LabelSelectorRequirement } from './meta.js';

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** A lowercase RFC 1123 subdomain of at most 253 characters: what most object names (a Secret's) must be. */
export function isDnsSubdomainName(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** undefined if `key` is a valid label key (`[prefix/]name`), else why not. */
export function labelKeyError(key: string): string | undefined {
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) return 'prefix part must be non-empty';
    if (prefix.length > 253) return 'prefix part must be no more than 253 characters';
    if (!DNS1123_SUBDOMAIN.test(prefix)) {
      return (
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
        'and must start and end with an alphanumeric character'
      );
    }
  } else if (parts.length > 2) {
    return (
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
      "alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!QUALIFIED_NAME.test(name)) {
    return (
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc')"
    );
  }
  return undefined;
}

/** undefined if `value` is a valid label value, else why not. */
export function labelValueError(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return (
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
      "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345')"
    );
  }
  return undefined;
}

/**
 * Problems that make Kubernetes refuse to turn this selector into a label selector, each as
 * `<part>: <problem>` (empty when valid). Shapes are checked too, so raw input is safe.
 */
export function labelSelectorErrors(selector: unknown): string[] {
  if (selector === undefined || selector === null) return [];
  if (typeof selector !== 'object' || Array.isArray(selector)) return ['selector must be an object'];
  const { matchLabels, matchExpressions } = selector as Record<string, unknown>;
  const errors: string[] = [];
  if (matchLabels !== undefined && matchLabels !== null) {
    if (typeof matchLabels !== 'object' || Array.isArray(matchLabels)) {
      errors.push('matchLabels: must be a map of string keys to string values');
    } else {
      for (const [key, value] of Object.entries(matchLabels)) {
        const keyError = labelKeyError(key);
        if (keyError) errors.push(`key: Invalid value: ${JSON.stringify(key)}: ${keyError}`);
        if (typeof value !== 'string') errors.push(`matchLabels[${key}]: must be a string`);
        else {
          const valueError = labelValueError(value);
          if (valueError) errors.push(`values[0][${key}]: Invalid value: ${JSON.stringify(value)}: ${valueError}`);
        }
      }
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) errors.push('matchExpressions: must be a list');
    else matchExpressions.forEach((expression: unknown) => errors.push(...requirementErrors(expression)));
  }
  return errors;
}

function requirementErrors(expression: unknown): string[] {
  if (typeof expression !== 'object' || expression === null || Array.isArray(expression)) {
    return ['matchExpressions: each element must be an object with key, operator and values'];
  }
  const { key, operator, values } = expression as Record<string, unknown>;
  if (typeof operator !== 'string' || !OPERATORS.includes(operator)) {
    return [`${JSON.stringify(operator ?? '')} is not a valid label selector operator`];
  }
  const errors: string[] = [];
  const keyText = typeof key === 'string' ? key : '';
  const keyError = labelKeyError(keyText);
  if (keyError) errors.push(`key: Invalid value: ${JSON.stringify(keyText)}: ${keyError}`);
  if (values !== undefined && values !== null && !Array.isArray(values)) {
    errors.push('values: must be a list of strings');
    return errors;
  }
  const list: unknown[] = Array.isArray(values) ? values : [];
  if ((operator === 'In' || operator === 'NotIn') && list.length === 0) {
    errors.push("values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty");
  }
  if ((operator === 'Exists' || operator === 'DoesNotExist') && list.length > 0) {
    errors.push('values: Invalid value: []string{...}: values set must be empty for exists and does not exist');
  }
  list.forEach((value, index) => {
    if (typeof value !== 'string') errors.push(`values[${index}]: must be a string`);
    else {
      const valueError = labelValueError(value);
      if (valueError)
        errors.push(`values[${index}][${keyText}]: Invalid value: ${JSON.stringify(value)}: ${valueError}`);
    }
  });
  return errors;
}

/** True if the selector has no requirement at all (it then matches every object). */
export function isEmptyLabelSelector(selector: LabelSelector): boolean {
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

/** Whether `labels` satisfy every requirement of a (valid) selector. */
export function labelSelectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>> = {}): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((requirement) => requirementMatches(requirement, labels));
}

function requirementMatches(requirement: LabelSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return has && value !== undefined && values.includes(value);
    case 'NotIn':
      return !has || value === undefined || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}
