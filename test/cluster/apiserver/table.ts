// Table output (Accept: application/json;as=Table;v=v1;g=meta.k8s.io): columns per kind, one row per object,
// each row carrying the object's metadata as PartialObjectMetadata (kubectl reads namespace and labels from it).
import { ageOf } from './age.js';
import { evaluateJsonPath, parseJsonPath } from './jsonpath.js';
import type { KubeObject } from './types.js';

export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority: number;
}

export interface TableConverter {
  columns: TableColumn[];
  cells(obj: KubeObject, now: number): unknown[];
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string | undefined; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumn[];
  rows: { cells: unknown[]; object: unknown }[];
}

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
};
export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};

export function column(name: string, type = 'string', priority = 0, description?: string): TableColumn {
  return description ? { name, type, priority, description } : { name, type, priority };
}

/** Name + Age: the converter of kinds without their own columns. */
export const defaultTable: TableConverter = {
  columns: [nameColumn, ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', ageOf(obj.metadata.creationTimestamp, now)],
};

function partialObjectMetadata(obj: KubeObject): unknown {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function buildTable(
  converter: TableConverter,
  objects: KubeObject[],
  now: number,
  metadata: Table['metadata'],
  withColumns = true,
): Table {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: withColumns ? converter.columns : [],
    rows: objects.map((obj) => ({ cells: converter.cells(obj, now), object: partialObjectMetadata(obj) })),
  };
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string | undefined;
  description?: string | undefined;
  priority?: number;
  jsonPath: string;
}

function renderCell(values: unknown[], type: string, now: number): unknown {
  if (values.length === 0) return null;
  const one = values.length === 1 ? values[0] : undefined;
  if (type === 'date') return one === undefined ? null : ageOf(one, now);
  if (one !== undefined) {
    if (type === 'integer' || type === 'number' || type === 'boolean') return one;
    return typeof one === 'string' ? one : JSON.stringify(one);
  }
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',');
}

/** A CRD version's additionalPrinterColumns (Age when none), after the Name column. */
export function printerColumnsTable(columns: PrinterColumn[]): TableConverter {
  const effective: PrinterColumn[] = columns.length
    ? columns
    : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  const compiled = effective.map((c) => ({ column: c, steps: parseJsonPath(c.jsonPath) }));
  return {
    columns: [
      nameColumn,
      ...effective.map((c) => {
        const def: TableColumn = { name: c.name, type: c.type, priority: c.priority ?? 0 };
        if (c.format) def.format = c.format;
        if (c.description) def.description = c.description;
        return def;
      }),
    ],
    cells: (obj, now) => [
      obj.metadata.name ?? '',
      ...compiled.map(({ column: c, steps }) => renderCell(evaluateJsonPath(steps, obj), c.type, now)),
    ],
  };
}
