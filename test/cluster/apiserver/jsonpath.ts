// The subset of kubectl JSONPath used by CRD additionalPrinterColumns and selectableFields:
// `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[*]`, `[?(@.type=="Ready")]` (also `!=`), chained.
import { isPlainObject } from './types.js';

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: string[]; op: '==' | '!='; value: string };

/** Parse a path; throws with a message naming the problem. */
export function parseJsonPath(expr: string): Step[] {
  let s = expr.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  if (s.startsWith('$')) s = s.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '.') {
      let j = i + 1;
      while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
      const name = s.slice(i + 1, j);
      if (!name) throw new Error(`invalid JSONPath ${JSON.stringify(expr)}: empty field name at ${i}`);
      steps.push({ kind: 'field', name });
      i = j;
    } else if (c === '[') {
      const end = findClose(s, i);
      if (end < 0) throw new Error(`invalid JSONPath ${JSON.stringify(expr)}: unclosed '['`);
      steps.push(parseBracket(s.slice(i + 1, end).trim(), expr));
      i = end + 1;
    } else {
      throw new Error(`invalid JSONPath ${JSON.stringify(expr)}: unexpected ${JSON.stringify(c)} at ${i}`);
    }
  }
  return steps;
}

function findClose(s: string, open: number): number {
  let quote: string | undefined;
  for (let i = open + 1; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ']') {
      return i;
    }
  }
  return -1;
}

function unquote(v: string): string {
  const t = v.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t;
}

function parseBracket(inner: string, expr: string): Step {
  if (inner === '*') return { kind: 'all' };
  if (/^-?\d+$/.test(inner)) return { kind: 'index', index: Number(inner) };
  if (inner.startsWith("'") || inner.startsWith('"')) return { kind: 'field', name: unquote(inner) };
  const filter = /^\?\(@((?:\.[^.=!]+)+)\s*(==|!=)\s*(.+)\)$/.exec(inner);
  if (filter) {
    return {
      kind: 'filter',
      path: filter[1]!.slice(1).split('.'),
      op: filter[2] as '==' | '!=',
      value: unquote(filter[3]!),
    };
  }
  throw new Error(`invalid JSONPath ${JSON.stringify(expr)}: unsupported [${inner}]`);
}

function getPath(value: unknown, path: string[]): unknown {
  let cur = value;
  for (const p of path) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

/** Evaluate parsed steps; returns every matching value (empty when nothing matches). */
export function evaluateJsonPath(steps: Step[], root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if (step.kind === 'field') {
        if (isPlainObject(v) && v[step.name] !== undefined) next.push(v[step.name]);
      } else if (step.kind === 'index') {
        if (Array.isArray(v)) {
          const idx = step.index < 0 ? v.length + step.index : step.index;
          if (idx >= 0 && idx < v.length) next.push(v[idx]);
        }
      } else if (step.kind === 'all') {
        if (Array.isArray(v)) next.push(...v);
        else if (isPlainObject(v)) next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const item of v) {
          const got = getPath(item, step.path);
          const str = got === undefined ? undefined : typeof got === 'string' ? got : JSON.stringify(got);
          if (step.op === '==' ? str === step.value : str !== step.value) next.push(item);
        }
      }
    }
    current = next;
  }
  return current;
}
