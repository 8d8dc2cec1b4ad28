// The Kubernetes API emulator (test infrastructure): an HTTP server on loopback that speaks enough of the real
// REST API for kubectl and @kubernetes/client-node, plus an in-process handle with fault hooks for tests.
// See README.md in this folder for what it models and what it does not.
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { silentLogger, type Logger } from '../../../src/observability/logger.js';
import { systemClock, type Clock } from '../../../src/util/clock.js';
import type { AdmissionChain } from './admission.js';
import { registerBuiltins } from './builtin/index.js';
import { createApiContext, type ApiContext } from './context.js';
import { CrdController } from './controllers/crd-controller.js';
import { GarbageCollector } from './controllers/garbage-collector.js';
import { CONTROLLER_WRITE } from './controllers/internal-writes.js';
import { NamespaceController } from './controllers/namespace-controller.js';
import { PodGarbageCollector } from './controllers/pod-gc.js';
import { WorkQueue } from './controllers/work-queue.js';
import { CRD_STORAGE_KEY } from './crd/crd-resource.js';
import { FaultState, type FaultRequest } from './faults.js';
import { createObject } from './handlers/create.js';
import { HttpFrontend } from './http-frontend.js';
import { loadSnapshot, saveSnapshot, takeSnapshot } from './persistence.js';
import { RequestLog, type RequestFilter } from './request-log.js';
import { formatTimestamp } from './types.js';
import { WatchHub } from './watch-hub.js';
import { installWebhookCaller, type WebhookCaller } from './webhooks/caller.js';

export { writeKubeconfig } from './kubeconfig.js';
export type { AdmissionPlugin, AdmissionRequest } from './admission.js';
export { admissionDenied } from './admission.js';

export interface ApiServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 = any free port (default). */
  port?: number;
  /** How many events are kept for watch resume; an older resourceVersion gets 410 (default 10000). */
  watchWindow?: number;
  /** Default 60000 (tests lower it). */
  bookmarkIntervalMs?: number;
  /** When set, state is persisted there on stop and loaded on start (process restarts). */
  dataFile?: string;
  logger?: Logger;
  /** Source of timestamps and watch timers (default: the system clock). */
  clock?: Clock | undefined;
}

export interface ApiServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Stops listening, ends all watches (and persists to dataFile). */
  close(): Promise<void>;
  /** stop + start on the SAME port keeping all data (connections dropped). */
  restart(): Promise<void>;
  /** For outages: stop() keeps data; start() listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  faults: {
    /** Ends every open watch stream (clients must resume). */
    closeAllWatches(): void;
    /** Fail the next n requests (matching `match`: method, path, query) with a Status of this code. */
    failNext(n: number, code: number, opts?: { reason?: string; match?: (req: FaultRequest) => boolean }): void;
    /** Delay every response by ms until cleared (stall(0)). */
    stall(ms: number): void;
    /** Forget all kept events: any resume from an older resourceVersion gets 410. */
    compact(): void;
  };
  /** Requests received (method, path prefix, User-Agent prefix). */
  requestCount(filter?: RequestFilter): number;
  /** The current global resourceVersion. */
  resourceVersion(): string;
  /** Hook point of the write path (mutating and validating admission plugins). */
  admission: AdmissionChain;
  /** Calls the registered admission webhooks (in the chain while webhook configurations exist). */
  webhooks: WebhookCaller;
  /** Number of open watch streams. */
  openWatches(): number;
  /** Resolves when the built-in controllers (garbage collector, namespace and CRD cleanup) have nothing queued. */
  controllersIdle(): Promise<void>;
}

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

async function seedNamespaces(ctx: ApiContext): Promise<void> {
  const rt = ctx.registry.lookup('', 'v1', 'namespaces')!;
  for (const name of DEFAULT_NAMESPACES) {
    if (ctx.store.get(rt.storageKey, '', name)) continue;
    await createObject(ctx, rt, '', { metadata: { name } }, CONTROLLER_WRITE);
  }
}

async function restoreState(ctx: ApiContext, crds: CrdController, dataFile: string): Promise<void> {
  const snapshot = await loadSnapshot(dataFile);
  if (!snapshot) return;
  const entries = [...snapshot.objects].sort(
    (a, b) => Number(b.storageKey === CRD_STORAGE_KEY) - Number(a.storageKey === CRD_STORAGE_KEY),
  );
  let dropped = 0;
  for (const { storageKey, object } of entries) {
    if (!ctx.registry.storageTypeOf(storageKey)) {
      dropped++;
      continue;
    }
    ctx.store.restore(storageKey, object);
    if (storageKey === CRD_STORAGE_KEY) crds.serve(object);
  }
  ctx.store.restoreRv(snapshot.resourceVersion);
  ctx.logger.info({ objects: entries.length - dropped, dropped, dataFile }, 'API emulator state loaded');
}

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const host = opts.host ?? '127.0.0.1';
  const logger = opts.logger ?? silentLogger;
  const clock = opts.clock ?? systemClock;
  const ctx = createApiContext(clock, logger);
  registerBuiltins(ctx.registry, () => formatTimestamp(clock.now()));

  const hub = new WatchHub(ctx.store, opts.watchWindow ?? 10_000);
  const queue = new WorkQueue(logger);
  const crds = new CrdController(ctx, queue, hub);
  if (opts.dataFile) await restoreState(ctx, crds, opts.dataFile);
  hub.window.compact(ctx.store.currentRv());
  new GarbageCollector(ctx, queue);
  new NamespaceController(ctx, queue);
  new PodGarbageCollector(ctx, queue);
  await seedNamespaces(ctx);
  const webhooks = installWebhookCaller(ctx);

  const faults = new FaultState();
  const requests = new RequestLog();
  let port = opts.port ?? 0;
  const frontend = new HttpFrontend({
    ctx,
    hub,
    faults,
    requests,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    address: () => `${host}:${port}`,
  });

  let server: Server | undefined;
  const sockets = new Set<Socket>();

  const listen = async (): Promise<void> => {
    if (server) return;
    const s = createServer((req, res) => frontend.handle(req, res));
    s.requestTimeout = 0;
    s.keepAliveTimeout = 60_000;
    s.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen({ host, port }, () => {
        s.off('error', reject);
        resolve();
      });
    });
    const address = s.address();
    if (typeof address === 'object' && address) port = address.port;
    server = s;
  };

  const stop = async (): Promise<void> => {
    const s = server;
    server = undefined;
    hub.closeAll();
    if (s) {
      const closed = new Promise<void>((resolve) => s.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await closed;
    }
    if (opts.dataFile) await saveSnapshot(opts.dataFile, takeSnapshot(ctx.store));
  };

  await listen();
  logger.info({ url: `http://${host}:${port}` }, 'API emulator listening');

  return {
    get url() {
      return `http://${host}:${port}`;
    },
    close: stop,
    stop,
    start: listen,
    restart: async () => {
      await stop();
      await listen();
    },
    faults: {
      closeAllWatches: () => hub.closeAll(),
      failNext: (n, code, o) => faults.failNext(n, code, o),
      stall: (ms) => faults.stall(ms),
      compact: () => hub.window.compact(ctx.store.currentRv()),
    },
    requestCount: (filter) => requests.count(filter),
    resourceVersion: () => String(ctx.store.currentRv()),
    admission: ctx.admission,
    webhooks,
    openWatches: () => hub.count(),
    controllersIdle: () => queue.idle(),
  };
}
