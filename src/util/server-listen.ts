// Starting and stopping the HTTP(S) servers of the agent and the controller (status, webhooks, pull credentials):
// one way to bind, to report a bind error, to log later errors, and to close at once.
import type { AddressInfo, Server } from 'node:net';

/**
 * Listen on host:port (port 0 = any free port; no host = every address). Resolves with the address bound; rejects
 * with the bind error (address in use, permission). Errors after the bind go to `onError`.
 */
export function listenOn(
  server: Server,
  host: string | undefined,
  port: number,
  onError: (err: Error) => void,
): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      server.on('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Stop accepting and drop every connection now; resolves once the server is closed (at once if it never listened). */
export function closeNow(server: Server & { closeAllConnections(): void }): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
