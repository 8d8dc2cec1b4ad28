// Namespaces for tests and benchmarks on the real cluster: one per test file (create it in before(), delete it in
// after()) so files do not see each other's objects. One helper per job: a generated name (a run never meets the
// previous run's still-terminating namespace), a fixed name created if missing, and a delete that may wait.
import type { KubeClient } from '../../src/kube/client.js';
import { isAlreadyExists, isNotFound } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CoreResources } from '../../src/kube/resource.js';
import { SERVICE_ACCOUNTS } from './kube-resources.js';
import { waitFor } from './wait.js';

/**
 * A new namespace named `<prefix>-<random>`; returns its name. With `forPods`, it returns once the namespace's
 * `default` ServiceAccount exists (kube-controller-manager makes it; pods are refused until then).
 */
export async function createTestNamespace(
  client: KubeClient,
  prefix: string,
  options: { forPods?: boolean } = {},
): Promise<string> {
  const created = await client.create<KubeObject>(CoreResources.namespaces, {
    metadata: { generateName: `${prefix}-` },
  });
  const name = created.metadata?.name;
  if (!name) throw new Error(`namespace ${prefix}-*: the API server returned no name`);
  if (options.forPods) await waitForDefaultServiceAccount(client, name);
  return name;
}

/** Wait until namespace `name` has its `default` ServiceAccount (pods are refused without it). */
export async function waitForDefaultServiceAccount(client: KubeClient, name: string): Promise<void> {
  await waitFor(
    () =>
      client.get(SERVICE_ACCOUNTS, 'default', { namespace: name }).then(
        () => true,
        (err: unknown) => {
          if (isNotFound(err)) return false;
          throw err;
        },
      ),
    { timeoutMs: 30_000, message: `ServiceAccount default in namespace ${name}` },
  );
}

/** Namespace `name`, created unless it exists (one that exists is kept as it is). */
export async function ensureNamespace(
  client: KubeClient,
  name: string,
  labels?: Record<string, string>,
): Promise<void> {
  await client.create(CoreResources.namespaces, { metadata: { name, labels } }).catch((err: unknown) => {
    if (!isAlreadyExists(err)) throw err;
  });
}

/**
 * Delete namespace `name` (gone already is fine). With `waitMs`, wait until it is gone with everything in it (its
 * pods stopped by kubelet), e.g. before the next run reuses a fixed name.
 */
export async function deleteTestNamespace(
  client: KubeClient,
  name: string,
  options: { waitMs?: number } = {},
): Promise<void> {
  await client.delete(CoreResources.namespaces, name).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
  if (options.waitMs === undefined) return;
  await waitFor(
    () =>
      client.get(CoreResources.namespaces, name).then(
        () => false,
        (err: unknown) => {
          if (isNotFound(err)) return true;
          throw err;
        },
      ),
    { timeoutMs: options.waitMs, intervalMs: 1000, message: `namespace ${name} deleted` },
  );
}
