// emulator: for informer-resilience.test.ts, which injects stream faults (closed watches, 410, outage, restart)
// The API emulator for the Kubernetes layer's component tests (quiet logs, a short bookmark interval).
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../../cluster/apiserver/index.js';

export type { ApiServer, ApiServerOptions };

export async function startEmulator(opts: ApiServerOptions = {}): Promise<ApiServer> {
  return await startApiServer(opts);
}
