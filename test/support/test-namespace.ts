// A namespace of a test file's own on the real cluster, so files do not see each other's objects: create it in
// before(), delete it in after(). Its name is generated, so a run never meets the previous run's still-terminating one.
import type { KubeClient } from '../../src/kube/client.js';
import { isNotFound } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CoreResources } from '../../src/kube/resource.js';

export async function createTestNamespace(client: KubeClient, prefix: string): Promise<string> {
  const created = await client.create<KubeObject>(CoreResources.namespaces, {
    metadata: { generateName: `${prefix}-` },
  });
  const name = created.metadata?.name;
  if (!name) throw new Error(`namespace ${prefix}-*: the API server returned no name`);
  return name;
}

export async function deleteTestNamespace(client: KubeClient, name: string): Promise<void> {
  await client.delete(CoreResources.namespaces, name).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}
