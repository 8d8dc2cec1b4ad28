// Choices made on a cluster's first up (registry ports, pod subnet) are kept in <dir>/allocations.json and reused,
// so a re-up keeps the same addresses.
import { createServer } from 'node:net';
import { readTextIfExists, writeAtomic } from './files.js';

export interface Allocations {
  registryPort?: number | undefined;
  authRegistryPort?: number | undefined;
  /** X of the pod subnet 10.X.0.0/16. */
  subnetOctet?: number | undefined;
}

function portOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < 65536 ? value : undefined;
}

/** Read the allocations; a missing or damaged file (or field) means "not chosen yet". */
export async function readAllocations(path: string): Promise<Allocations> {
  const text = await readTextIfExists(path);
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null) return {};
  const record = parsed as Record<string, unknown>;
  const octet = record.subnetOctet;
  return {
    registryPort: portOrUndefined(record.registryPort),
    authRegistryPort: portOrUndefined(record.authRegistryPort),
    subnetOctet: typeof octet === 'number' && Number.isInteger(octet) && octet >= 1 && octet <= 254 ? octet : undefined,
  };
}

/** Merge `update` into the stored allocations. */
export async function saveAllocations(path: string, update: Allocations): Promise<Allocations> {
  const merged = { ...(await readAllocations(path)), ...update };
  await writeAtomic(path, `${JSON.stringify(merged, null, 2)}\n`);
  return merged;
}

/** A TCP port on 127.0.0.1 nobody listens on right now (the kernel picks it). */
export function freeLoopbackPort(): Promise<number> {
  return freePortOn('127.0.0.1');
}

/** A TCP port free on every address (for a server that listens on 0.0.0.0, e.g. OpenKruise's webhook server). */
export function freeAnyAddressPort(): Promise<number> {
  return freePortOn('0.0.0.0');
}

function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Can we listen on 127.0.0.1:port right now? */
export function loopbackPortIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
