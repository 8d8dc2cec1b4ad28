// The API emulator (test/cluster/apiserver, owned by the apiserver engineer), loaded by path at run time so this
// folder compiles before it lands. The interface is the one agreed in the project's issue.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';

export interface ApiServerOptions {
  host?: string;
  port?: number;
  watchWindow?: number;
  bookmarkIntervalMs?: number;
  dataFile?: string;
  logger?: Logger;
}

export interface ApiServer {
  url: string;
  close(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  faults: {
    closeAllWatches(): void;
    failNext(
      n: number,
      code: number,
      opts?: { reason?: string; match?: (req: { method: string; path: string }) => boolean },
    ): void;
    stall(ms: number): void;
    compact(): void;
  };
  requestCount(filter?: { method?: string; pathPrefix?: string; userAgent?: string }): number;
  resourceVersion(): string;
}

interface EmulatorModule {
  startApiServer(opts?: ApiServerOptions): Promise<ApiServer>;
  writeKubeconfig(path: string, url: string): Promise<void>;
}

// <outDir>/test/cluster/apiserver/index.js beside this compiled file.
function emulatorPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return join(here, '..', '..', '..', 'cluster', 'apiserver', 'index.js');
}

export function emulatorAvailable(): boolean {
  return existsSync(emulatorPath());
}

export async function loadEmulator(): Promise<EmulatorModule> {
  const path = emulatorPath();
  return (await import(path)) as EmulatorModule;
}

export async function startEmulator(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const mod = await loadEmulator();
  return await mod.startApiServer(opts);
}
