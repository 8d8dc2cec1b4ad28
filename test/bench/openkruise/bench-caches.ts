// Watch caches of the bench namespace's pods and CRRs (the admin client's informers): the bench waits on them
// (polling memory, not the API server) so that its own reads add no load while the agents are measured.
import {
  CONTAINER_RECREATE_REQUESTS,
  type ContainerRecreateRequest,
} from '../../../src/api/containerrecreaterequest.js';
import type { WirePod } from '../../../src/api/wire.js';
import type { KubeClient } from '../../../src/kube/client.js';
import { Informer } from '../../../src/kube/informer/informer.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { waitFor } from '../../support/wait.js';

export interface BenchCaches {
  pods: Informer<WirePod>;
  crrs: Informer<ContainerRecreateRequest>;
  pod(name: string): WirePod | undefined;
  crr(name: string): ContainerRecreateRequest | undefined;
  stop(): Promise<void>;
}

export async function benchCaches(client: KubeClient, namespace: string): Promise<BenchCaches> {
  const pods = new Informer<WirePod>(CoreResources.pods, client, { namespace, name: 'bench-pods' });
  const crrs = new Informer<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, client, {
    namespace,
    name: 'bench-crrs',
  });
  pods.start();
  crrs.start();
  const caches: BenchCaches = {
    pods,
    crrs,
    pod: (name) => pods.get(`${namespace}/${name}`),
    crr: (name) => crrs.get(`${namespace}/${name}`),
    stop: async () => {
      await pods.stop();
      await crrs.stop();
    },
  };
  try {
    await waitFor(() => pods.hasSynced() && crrs.hasSynced(), {
      timeoutMs: 30_000,
      message: 'the bench caches synced',
    });
  } catch (err) {
    await caches.stop();
    throw err;
  }
  return caches;
}
