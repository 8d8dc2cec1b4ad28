// Label and field selectors with kube-apiserver's grammar. Parsing errors become 400 BadRequest.
import { apiErrors } from './errors.js';
import { isValidLabelValue, qualifiedNameErrors } from './builtin/names.js';
import { fieldError, type FieldError } from './field-errors.js';
import { isPlainObject } from './types.js';

type LabelOp = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export interface LabelSelector {
  requirements: LabelRequirement[];
  matches(labels: Record<string, string> | undefined): boolean;
}

const SPECIAL = new Set(['!', '=', '(', ')', ',', '<', '>']);

function tokenize(input: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '!' && input[i + 1] === '=') {
      tokens.push('!=');
      i += 2;
    } else if (c === '=' && input[i + 1] === '=') {
      tokens.push('==');
      i += 2;
    } else if (SPECIAL.has(c)) {
      tokens.push(c);
      i++;
    } else {
      let j = i;
      while (j < input.length && !SPECIAL.has(input[j]!) && !/\s/.test(input[j]!)) j++;
      tokens.push(input.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

function isIdentifier(token: string | undefined): token is string {
  return token !== undefined && !SPECIAL.has(token) && token !== '!=' && token !== '==';
}

function requirementError(selector: string, why: string): Error {
  return apiErrors.badRequest(`unable to parse requirement: ${why} (in selector "${selector}")`);
}

function checkKey(selector: string, key: string): void {
  const errs = qualifiedNameErrors(key);
  if (errs.length) throw requirementError(selector, `invalid label key "${key}": ${errs.join('; ')}`);
}

function checkValue(selector: string, value: string): void {
  if (!isValidLabelValue(value)) {
    throw requirementError(
      selector,
      `invalid label value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

/** Parse `a=b,c!=d,e in (x,y),!f,g`. An empty string selects everything. */
export function parseLabelSelector(selector: string): LabelSelector {
  const tokens = tokenize(selector);
  const requirements: LabelRequirement[] = [];
  let pos = 0;
  const peek = (): string | undefined => tokens[pos];
  const next = (): string | undefined => tokens[pos++];
  while (pos < tokens.length) {
    let negated = false;
    if (peek() === '!') {
      negated = true;
      next();
    }
    const key = next();
    if (!isIdentifier(key)) throw requirementError(selector, `found '${key ?? ''}', expected: identifier`);
    checkKey(selector, key);
    if (negated) {
      requirements.push({ key, op: 'notexists', values: [] });
    } else {
      const op = peek();
      if (op === undefined || op === ',') {
        requirements.push({ key, op: 'exists', values: [] });
      } else if (op === '=' || op === '==' || op === '!=' || op === '<' || op === '>') {
        next();
        let value = '';
        if (isIdentifier(peek())) value = next()!;
        checkValue(selector, value);
        if ((op === '<' || op === '>') && !/^-?\d+$/.test(value)) {
          throw requirementError(selector, `for 'Gt', 'Lt' operators, the value must be an integer`);
        }
        const kind: LabelOp = op === '!=' ? 'neq' : op === '<' ? 'lt' : op === '>' ? 'gt' : 'eq';
        requirements.push({ key, op: kind, values: [value] });
      } else if (op === 'in' || op === 'notin') {
        next();
        if (next() !== '(') throw requirementError(selector, `found '${tokens[pos - 1] ?? ''}', expected: '('`);
        const values: string[] = [];
        for (;;) {
          const t = next();
          if (t === ')') break;
          if (t === ',') continue;
          if (!isIdentifier(t))
            throw requirementError(selector, `found '${t ?? ''}', expected: ',', ')' or identifier`);
          checkValue(selector, t);
          values.push(t);
        }
        if (values.length === 0)
          throw requirementError(selector, `for 'in', 'notin' operators, values set can't be empty`);
        requirements.push({ key, op: op === 'in' ? 'in' : 'notin', values });
      } else {
        throw requirementError(selector, `found '${op}', expected: '=', '!=', '==', 'in', notin'`);
      }
    }
    const sep = next();
    if (sep !== undefined && sep !== ',') throw requirementError(selector, `found '${sep}', expected: ','`);
    if (sep === ',' && pos >= tokens.length) throw requirementError(selector, `found '', expected: identifier`);
  }
  return {
    requirements,
    matches: (labels) => requirements.every((r) => requirementMatches(r, labels ?? {})),
  };
}

function requirementMatches(r: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'eq':
      return has && value === r.values[0];
    case 'neq':
      return !has || value !== r.values[0];
    case 'in':
      return has && r.values.includes(value!);
    case 'notin':
      return !has || !r.values.includes(value!);
    case 'exists':
      return has;
    case 'notexists':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value!)) return false;
      const n = Number(value);
      const bound = Number(r.values[0]);
      return r.op === 'gt' ? n > bound : n < bound;
    }
  }
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

export interface FieldSelector {
  requirements: FieldRequirement[];
  /** `get` returns the object's value of a field (undefined = absent, compared as ""). */
  matches(get: (field: string) => string | undefined): boolean;
}

function splitUnescaped(input: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === '\\' && i + 1 < input.length) {
      current += c + input[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

function unescapeFieldValue(value: string, selector: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      const n = value[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=') {
        throw apiErrors.badRequest(`invalid field selector: invalid escape sequence in "${selector}"`);
      }
      out += n;
      i++;
    } else if (c === ',' || c === '=') {
      throw apiErrors.badRequest(`invalid field selector: unescaped "${c}" in value of "${selector}"`);
    } else {
      out += c;
    }
  }
  return out;
}

/** Parse `metadata.name=x,spec.nodeName!=y`; `==` is the same as `=`. */
export function parseFieldSelector(selector: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  if (selector.trim() !== '') {
    for (const term of splitUnescaped(selector, ',')) {
      const match = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
      if (!match) throw apiErrors.badRequest(`invalid field selector: "${term}" is not a valid field selector term`);
      const field = match[1]!.trim();
      if (!field) throw apiErrors.badRequest(`invalid field selector: empty field name in "${term}"`);
      requirements.push({
        field,
        op: match[2] === '!=' ? 'neq' : 'eq',
        value: unescapeFieldValue(match[3]!, selector),
      });
    }
  }
  return {
    requirements,
    matches: (get) =>
      requirements.every((r) => {
        const actual = get(r.field) ?? '';
        return r.op === 'eq' ? actual === r.value : actual !== r.value;
      }),
  };
}

const SELECTOR_OPS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** Validation of a metav1.LabelSelector object ({matchLabels, matchExpressions}). */
export function labelSelectorErrors(selector: Record<string, unknown>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const exprs = selector.matchExpressions;
  if (exprs !== undefined && !Array.isArray(exprs)) {
    errs.push(fieldError.typeInvalid(`${path}.matchExpressions`, exprs, 'must be a list'));
  } else if (Array.isArray(exprs)) {
    exprs.forEach((e, i) => {
      const p = `${path}.matchExpressions[${i}]`;
      if (!isPlainObject(e)) return errs.push(fieldError.typeInvalid(p, e, 'must be an object'));
      if (!SELECTOR_OPS.includes(String(e.operator))) {
        errs.push(fieldError.notSupported(`${p}.operator`, e.operator, SELECTOR_OPS));
      }
      const values = Array.isArray(e.values) ? e.values : [];
      if ((e.operator === 'In' || e.operator === 'NotIn') && values.length === 0) {
        errs.push(fieldError.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      }
      if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && values.length > 0) {
        errs.push(
          fieldError.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        );
      }
      return undefined;
    });
  }
  return errs;
}

/** Does a metav1.LabelSelector object select these labels? An empty selector selects everything. */
export function labelSelectorObjectMatches(selector: Record<string, unknown>, labels: Record<string, string>): boolean {
  const matchLabels = selector.matchLabels;
  if (isPlainObject(matchLabels)) {
    for (const [k, v] of Object.entries(matchLabels)) if (labels[k] !== v) return false;
  }
  const exprs = selector.matchExpressions;
  if (Array.isArray(exprs)) {
    for (const e of exprs) {
      if (!isPlainObject(e) || typeof e.key !== 'string') return false;
      const has = Object.prototype.hasOwnProperty.call(labels, e.key);
      const values = Array.isArray(e.values) ? e.values.map(String) : [];
      const value = labels[e.key];
      const ok =
        e.operator === 'In'
          ? has && values.includes(value!)
          : e.operator === 'NotIn'
            ? !has || !values.includes(value!)
            : e.operator === 'Exists'
              ? has
              : e.operator === 'DoesNotExist'
                ? !has
                : false;
      if (!ok) return false;
    }
  }
  return true;
}
