// A small HTTP proxy in front of a test registry, to make pulls slow on purpose: while `stallBlobs` is on, blob
// responses (/v2/<name>/blobs/...) are held until it is turned off (or the client gives up). Counts manifest and
// blob requests, so a test can tell how many pulls reached the registry. Loopback only; for containerd, point a
// certs.d hosts.toml (plain http) at it: writeContainerdHosts().
import { mkdir, rm, writeFile } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';

export interface RegistryProxy {
  /** 127.0.0.1:PORT */
  host: string;
  stallBlobs: boolean;
  /** GET/HEAD of manifests, by repository:reference. */
  manifestRequests(): number;
  blobRequests(): number;
  /** Requests being held right now. */
  stalled(): number;
  close(): Promise<void>;
}

export async function startRegistryProxy(upstream: string): Promise<RegistryProxy> {
  const [upstreamHost, upstreamPort] = upstream.split(':');
  let manifests = 0;
  let blobs = 0;
  const held = new Set<() => void>();
  const sockets = new Set<Socket>();
  const state = { stallBlobs: false };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const upstreamReq = httpRequest(
      {
        host: upstreamHost,
        port: Number(upstreamPort),
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream },
      },
      (upstreamRes) => {
        const headers = { ...upstreamRes.headers };
        res.writeHead(upstreamRes.statusCode ?? 502, headers);
        upstreamRes.pipe(res);
      },
    );
    upstreamReq.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstreamReq);
  };

  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    if (/\/manifests\//.test(path)) manifests++;
    const isBlob = /\/blobs\/sha/.test(path);
    if (isBlob) blobs++;
    if (isBlob && state.stallBlobs) {
      const release = (): void => {
        held.delete(release);
        if (!res.destroyed) forward(req, res);
      };
      held.add(release);
      res.on('close', () => held.delete(release));
      return;
    }
    forward(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    host: `127.0.0.1:${port}`,
    get stallBlobs() {
      return state.stallBlobs;
    },
    set stallBlobs(on: boolean) {
      state.stallBlobs = on;
      if (!on) for (const release of [...held]) release();
    },
    manifestRequests: () => manifests,
    blobRequests: () => blobs,
    stalled: () => held.size,
    async close() {
      held.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** containerd reads <certsDir>/<host>/hosts.toml on every pull: make `host` a plain-http registry. Returns a remover. */
export async function writeContainerdHosts(certsDir: string, host: string): Promise<() => Promise<void>> {
  const dir = join(certsDir, host);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'hosts.toml'),
    `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n`,
  );
  return () => rm(dir, { recursive: true, force: true });
}
