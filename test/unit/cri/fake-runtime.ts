// In-process stand-ins for unit tests: a fake CRI runtime (grpc-js server on a unix socket, serving the
// handlers a test gives it, with the real proto definitions) and decoy paths for socket discovery.
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { criServices } from '../../../src/cri/proto.js';
import type { ImageServiceHandlers } from '../../../src/cri/generated/runtime/v1/ImageService.js';
import type { RuntimeServiceHandlers } from '../../../src/cri/generated/runtime/v1/RuntimeService.js';

export interface FakeRuntimeHandlers {
  runtime?: Partial<RuntimeServiceHandlers> | undefined;
  image?: Partial<ImageServiceHandlers>;
}

export interface FakeRuntime {
  socket: string;
  /** Calls received per method name. */
  calls: Map<string, number>;
  /** Requests received, in order (method, request as decoded). */
  requests: { method: string; request: unknown }[];
  stop(): Promise<void>;
}

/** Handlers answering Version (as containerd 1.6 does) and ListImages (no images). */
export const CRI_BASICS: FakeRuntimeHandlers = {
  runtime: {
    Version: (_call, cb) =>
      cb(null, { version: '0.1.0', runtime_name: 'fake-cri', runtime_version: '0.0.1', runtime_api_version: 'v1' }),
  },
  image: { ListImages: (_call, cb) => cb(null, { images: [] }) },
};

/** Wrap every handler so calls and requests are recorded. */
function recorded(
  handlers: Record<string, unknown> | undefined,
  fake: Pick<FakeRuntime, 'calls' | 'requests'>,
): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(handlers ?? {})) {
    if (typeof handler !== 'function') continue;
    out[method] = (call: { request: unknown }, cb: unknown) => {
      fake.calls.set(method, (fake.calls.get(method) ?? 0) + 1);
      fake.requests.push({ method, request: call.request });
      (handler as (c: unknown, cb: unknown) => void)(call, cb);
    };
  }
  return out;
}

/** Start a fake runtime listening on `socket` (created with its parent directory). */
export async function startFakeRuntime(socket: string, handlers: FakeRuntimeHandlers): Promise<FakeRuntime> {
  mkdirSync(dirname(socket), { recursive: true });
  const server = new Server();
  const fake: FakeRuntime = {
    socket,
    calls: new Map(),
    requests: [],
    stop: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
  const merged = {
    runtime: { ...(handlers.runtime ?? {}) },
    image: { ...(handlers.image ?? {}) },
  };
  server.addService(criServices().runtime, recorded(merged.runtime, fake));
  server.addService(criServices().image, recorded(merged.image, fake));
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return fake;
}

/** A temporary directory removed by the returned cleanup. Short path: unix socket paths are limited to 107 bytes. */
export async function tempDir(prefix = 'kd-cri-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A unix socket file nobody listens on (a runtime that died without removing it). */
export async function staleSocket(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const scratch = `${path}.tmp`;
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(scratch, resolve));
  linkSync(scratch, path); // a second name for the socket inode survives the close below
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A regular file where a socket is expected. */
export function regularFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, 'not a socket\n');
}

export interface Listener {
  stop(): Promise<void>;
}

function closer(server: NetServer, sockets: Set<Socket>): Listener {
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A unix socket served by an HTTP/1.1 server: something listens, but it is not gRPC. */
export async function httpSocket(path: string): Promise<Listener> {
  mkdirSync(dirname(path), { recursive: true });
  const server = createHttpServer((_req, res) => res.end('hello from http\n'));
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return closer(server, sockets);
}

/** A unix socket that accepts connections and never says anything (a hung runtime). */
export async function silentSocket(path: string): Promise<Listener> {
  mkdirSync(dirname(path), { recursive: true });
  const sockets = new Set<Socket>();
  const server = createNetServer((s) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return closer(server, sockets);
}
