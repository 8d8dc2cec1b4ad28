// A small HTTP proxy in front of a test registry, to make pulls slow on purpose: while `stallBlobs` is on, blob
// responses (/v2/<name>/blobs/...) are held until it is turned off (or the client gives up); manifest requests from
// an address in `refuseFrom` are answered 404 (a pull that fails on one node of a real cluster only); with
// `blobDelayMs` set, every blob response starts that long after its request (a pull that takes as long as a real
// image's from a remote registry, though the test image is small and local). Counts
// manifest and blob requests, so a test can tell how many pulls reached the registry. Listens on loopback unless
// told an address (the host's node-network address on the real cluster); for containerd, point a certs.d
// hosts.toml (plain http) at it: writeContainerdHosts().
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { waitFor } from './wait.js';

export interface RegistryProxy {
  /** ADDRESS:PORT (127.0.0.1 unless told) */
  host: string;
  stallBlobs: boolean;
  /** Hold each blob response this long before forwarding it (0: none). */
  blobDelayMs: number;
  /** While on, each blob over 64 KiB is sent half-way and the rest held until it is turned off (a pull caught mid-way). */
  halfBlobs: boolean;
  /** Client addresses whose manifest requests get 404 (MANIFEST_UNKNOWN). */
  readonly refuseFrom: Set<string>;
  /** Blobs (by digest) whose GETs are held, not answered, until released (the rest pass). */
  holdDigests(digests: readonly string[]): void;
  releaseDigests(): void;
  /** GET/HEAD of manifests, by repository:reference. */
  manifestRequests(): number;
  blobRequests(): number;
  /** Bytes of blob bodies sent to clients (a pull that resumes sends fewer than the blob's size). */
  blobBytes(): number;
  /** Requests being held right now. */
  stalled(): number;
  close(): Promise<void>;
}

export async function startRegistryProxy(upstream: string, listenAddress = '127.0.0.1'): Promise<RegistryProxy> {
  const [upstreamHost, upstreamPort] = upstream.split(':');
  let manifests = 0;
  let blobs = 0;
  let blobBytes = 0;
  const held = new Set<() => void>();
  const sockets = new Set<Socket>();
  const state = { stallBlobs: false, blobDelayMs: 0, halfBlobs: false };
  const halves = new Set<() => void>();
  const refuseFrom = new Set<string>();
  const heldDigests = new Set<string>();
  const heldByDigest = new Set<() => void>();

  /** Send the upstream response on: piped as it comes, or through `answer` (which owns `res` then). */
  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    answer: (upstreamRes: IncomingMessage, res: ServerResponse) => void = (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, { ...upstreamRes.headers });
      if (/\/blobs\/sha/.test(req.url ?? '') && req.method === 'GET') {
        upstreamRes.on('data', (chunk: Buffer) => (blobBytes += chunk.length));
      }
      upstreamRes.pipe(res);
    },
  ): void => {
    const upstreamReq = httpRequest(
      {
        host: upstreamHost,
        port: Number(upstreamPort),
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream },
      },
      (upstreamRes) => answer(upstreamRes, res),
    );
    upstreamReq.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstreamReq);
  };

  /** The blob's first half now, the rest once halfBlobs goes off (the whole body is read first: test images). */
  const sendHalf = (upstreamRes: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    upstreamRes.on('data', (chunk: Buffer) => chunks.push(chunk));
    upstreamRes.on('end', () => {
      const body = Buffer.concat(chunks);
      // small blobs (configs) whole: a runtime fetches the config before the layers
      const half = body.length > 64 * 1024 ? Math.floor(body.length / 2) : body.length;
      res.writeHead(upstreamRes.statusCode ?? 502, {
        ...upstreamRes.headers,
        'content-length': String(body.length),
      });
      res.write(body.subarray(0, half));
      blobBytes += half;
      const rest = (): void => {
        halves.delete(rest);
        if (res.destroyed) return;
        blobBytes += body.length - half;
        res.end(body.subarray(half));
      };
      if (state.halfBlobs) {
        halves.add(rest);
        res.on('close', () => halves.delete(rest));
      } else rest();
    });
  };

  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    const isManifest = /\/manifests\//.test(path);
    if (isManifest) manifests++;
    if (isManifest && refuseFrom.has(normalAddress(req.socket.remoteAddress))) {
      const body = JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown (refused)' }] });
      res.writeHead(404, { 'content-type': 'application/json' }).end(body);
      return;
    }
    const isBlob = /\/blobs\/sha/.test(path);
    if (isBlob) blobs++;
    const digest = /\/blobs\/(sha256:[0-9a-f]+)/.exec(path)?.[1];
    /** Answer the request only once its release (kept in `releases`) is called. */
    const holdIn = (releases: Set<() => void>): void => {
      const release = (): void => {
        releases.delete(release);
        if (!res.destroyed) forward(req, res);
      };
      releases.add(release);
      res.on('close', () => releases.delete(release));
    };
    if (isBlob && digest !== undefined && heldDigests.has(digest)) {
      holdIn(heldByDigest);
      return;
    }
    if (isBlob && state.stallBlobs) {
      holdIn(held);
      return;
    }
    if (isBlob && state.halfBlobs && req.method === 'GET') {
      forward(req, res, sendHalf);
      return;
    }
    if (isBlob && state.blobDelayMs > 0) {
      const timer = setTimeout(() => {
        if (!res.destroyed) forward(req, res);
      }, state.blobDelayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    forward(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, listenAddress, resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    host: `${listenAddress}:${port}`,
    refuseFrom,
    holdDigests(digests) {
      for (const d of digests) heldDigests.add(d);
    },
    releaseDigests() {
      heldDigests.clear();
      for (const release of [...heldByDigest]) release();
    },
    get stallBlobs() {
      return state.stallBlobs;
    },
    set stallBlobs(on: boolean) {
      state.stallBlobs = on;
      if (!on) for (const release of [...held]) release();
    },
    get halfBlobs() {
      return state.halfBlobs;
    },
    set halfBlobs(on: boolean) {
      state.halfBlobs = on;
      if (!on) for (const rest of [...halves]) rest();
    },
    get blobDelayMs() {
      return state.blobDelayMs;
    },
    set blobDelayMs(ms: number) {
      state.blobDelayMs = ms;
    },
    manifestRequests: () => manifests,
    blobRequests: () => blobs,
    blobBytes: () => blobBytes,
    stalled: () => held.size,
    async close() {
      held.clear();
      halves.clear();
      heldByDigest.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An IPv4 peer address as `10.0.0.1`, also when the socket reports it IPv4-mapped (`::ffff:10.0.0.1`). */
function normalAddress(address: string | undefined): string {
  return (address ?? '').replace(/^::ffff:/, '');
}

/**
 * containerd reads <certsDir>/<registry>/hosts.toml on every pull: pulls from `registry` (default `host` itself) go to
 * `host` over plain http. Returns a remover.
 */
export async function writeContainerdHosts(
  certsDir: string,
  host: string,
  registry = host,
): Promise<() => Promise<void>> {
  const dir = join(certsDir, registry);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'hosts.toml'),
    `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n`,
  );
  return () => rm(dir, { recursive: true, force: true });
}

/**
 * A plain-http registry `host` for CRI-O on one node (its cell), serving `registry`'s images (itself by default, or
 * as a mirror of `docker.io`, say): a drop-in in the node's registries.conf.d, and SIGHUP to that node's crio, which
 * re-reads its registries then (it caches them otherwise); waits for crio to log that it applied them. Returns the
 * remover (the same, backwards).
 */
export async function writeCrioRegistry(
  registriesConfDir: string,
  crio: { pidFile: string; logFile: string },
  host: string,
  registry = host,
): Promise<() => Promise<void>> {
  const file = join(registriesConfDir, `proxy-${`${registry}-${host}`.replace(/[^A-Za-z0-9.-]/g, '_')}.conf`);
  await mkdir(registriesConfDir, { recursive: true });
  await writeFile(
    file,
    registry === host
      ? `[[registry]]\nlocation = "${host}"\ninsecure = true\n`
      : `[[registry]]\nprefix = "${registry}"\nlocation = "${registry}"\n\n[[registry.mirror]]\nlocation = "${host}"\ninsecure = true\n`,
  );
  await reloadCrio(crio);
  return async () => {
    await rm(file, { force: true });
    await reloadCrio(crio);
  };
}

async function reloadCrio(crio: { pidFile: string; logFile: string }): Promise<void> {
  const applied = async (): Promise<number> =>
    ((await readFile(crio.logFile, 'utf8').catch(() => '')).match(/Applied new registry configuration/g) ?? []).length;
  const before = await applied();
  const pid = Number((await readFile(crio.pidFile, 'utf8')).trim());
  process.kill(pid, 'SIGHUP');
  await waitFor(async () => (await applied()) > before, {
    timeoutMs: 10_000,
    message: `crio (pid ${pid}) to apply its new registry configuration after SIGHUP`,
  });
}
