// What a test run needs built before its first test: the Debian packages and the Go-built programs of the stack
// the tests run on (test/cluster/k8s/build.sh, into the cache outside the repository). Called once by the root
// hook in fixtures.ts; a warm cache builds nothing. Without it, a first run's build (5 to 15 minutes on 2 cores)
// would land in whichever test's hook first brings a cluster up, and outlast that hook's timeout.
import { join } from 'node:path';
import { cacheDir, ensureStackBuilt } from '../cluster/k8s/binaries.js';
import { ensureHostPackages, stackPackages } from '../cluster/runtime/host-packages.js';
import { requestedStack, stackName } from '../cluster/stack.js';

/** The part of the stack the run's test files need: a real cluster (e2e), only a runtime (component) or nothing. */
export function neededForRun(files: readonly string[]): 'cluster' | 'runtime' | undefined {
  if (files.some((file) => /[\\/]test[\\/]e2e[\\/]/.test(file))) return 'cluster';
  if (files.some((file) => /[\\/]test[\\/]component[\\/]/.test(file))) return 'runtime';
  return undefined;
}

export async function prepareRun(files: readonly string[], log: (message: string) => void): Promise<void> {
  const what = neededForRun(files);
  if (what === undefined) return;
  const stack = requestedStack();
  const started = Date.now();
  await ensureHostPackages(stackPackages(stack), join(cacheDir(), 'logs', 'apt.log'), log);
  const before = Date.now();
  await ensureStackBuilt(stack, what, log);
  const built = Date.now() - before;
  if (built > 5_000) {
    log(
      `${stackName(stack)}: built in ${Math.round(built / 1000)} s (${Math.round((Date.now() - started) / 1000)} s with packages)`,
    );
  }
}
