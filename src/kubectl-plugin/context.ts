// What every plugin command gets: the API (the light src/kube client, or a fake in tests), a clock for following,
// a way to read an agent's /metrics by URL, and where to print.
import type { KubeClient } from '../kube/client.js';
import type { Clock } from '../util/clock.js';
import type { GlobalOptions } from './command-line.js';

/** The part of KubeClient the plugin uses. */
export type PluginApi = Pick<KubeClient, 'get' | 'list' | 'create'> & {
  readonly defaultNamespace: string;
  readonly transport: Pick<KubeClient['transport'], 'request'>;
};

export interface PluginIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
}

export interface PluginContext extends PluginIo {
  api: PluginApi;
  clock: Clock;
  global: GlobalOptions;
  /** GET a URL and return its body (an agent's /metrics given with --agent); rejects on a non-2xx answer. */
  fetchText(url: string): Promise<string>;
  /** How often pull/recreate re-read the object they follow. */
  pollIntervalMs: number;
}

export function namespaceOf(ctx: PluginContext): string {
  return ctx.global.namespace ?? ctx.api.defaultNamespace;
}

export function printJson(ctx: PluginIo, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** After a create: say so in `line` (with `-o json`, print the object instead unless following); true to follow. */
export function announceCreated(ctx: PluginContext, created: unknown, line: string, following: boolean): boolean {
  if (ctx.global.output !== 'json') ctx.stdout.write(`${line}\n`);
  else if (!following) printJson(ctx, created);
  return following;
}

/** Re-read with `read` every interval until `done` says so or the deadline passes (then `finished` is false).
 * Each new `progress` line is printed as it changes; with `-o json` nothing is, and the last object read is printed
 * at the end instead. */
export async function follow<T>(
  ctx: PluginContext,
  timeoutMs: number,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  progress: (value: T) => string,
): Promise<{ last: T; finished: boolean }> {
  const json = ctx.global.output === 'json';
  const deadline = ctx.clock.now() + timeoutMs;
  let said = '';
  for (;;) {
    const last = await read();
    const line = progress(last);
    if (line !== said && !json) ctx.stdout.write(`  ${line}\n`);
    said = line;
    const finished = done(last);
    if (finished || ctx.clock.now() >= deadline) {
      if (json) printJson(ctx, last);
      return { last, finished };
    }
    await ctx.clock.sleep(Math.min(ctx.pollIntervalMs, Math.max(1, deadline - ctx.clock.now())));
  }
}
