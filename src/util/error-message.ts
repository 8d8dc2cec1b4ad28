// One human summary of any thrown value, for logs, statuses and events.

/** The message of an Error, or the value as text (never includes request headers, so never a token). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
