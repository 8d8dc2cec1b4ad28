// RFC 3339 timestamps as the API carries them (metav1.Time has second precision).
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Milliseconds since the epoch of an RFC 3339 string; undefined when absent or unparsable. */
export function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
