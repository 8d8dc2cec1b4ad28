// Timestamps as the Kubernetes API carries them: metav1.Time (RFC 3339, whole seconds) and metav1.MicroTime.

/** metav1.Time: RFC 3339 in UTC, whole seconds (the fraction is dropped). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Milliseconds since the epoch of an RFC 3339 string; undefined when absent or unparsable. */
export function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
