// The one guard for a JSON object read from outside (API objects, CNI stdin, files): a non-null, non-array object.

/** A non-null object that is not an array, its keys readable. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
