// The real local Kubernetes cluster (CLUSTER_KIND=real) as an ordered list of components: the same registries and
// test images as the emulator-based cluster, the kruise-daemon image (built here, pushed to the open registry for
// every node to pull), then Kubernetes built from Go modules, its PKI, the control plane and
// N nodes, and a last check that the cluster serves workloads (every Node Ready, the default ServiceAccount made).
import type { ClusterComponent, ClusterContext } from '../component.js';
import { kruiseImage } from '../image/component.js';
import { hostPackages } from '../runtime/host-packages.js';
import { registries } from '../runtime/registries.js';
import { testImages } from '../runtime/test-images.js';
import { waitUntil } from '../runtime/wait-until.js';
import { apiRequest } from './api-client.js';
import { k8sBinaries } from './binaries.js';
import { layoutFromContext } from './context.js';
import { controlPlane } from './control-plane.js';
import { hostNetwork } from './host-network.js';
import { nodes } from './nodes.js';
import { pki } from './pki.js';

function workloadsReady(): ClusterComponent {
  return {
    name: 'workloads-ready',
    async up(ctx: ClusterContext) {
      const layout = await layoutFromContext(ctx);
      if (!layout) throw new Error('workloads-ready needs the host-network component first');
      await waitUntil(
        async () => (await apiRequest(layout, '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
        {
          timeoutMs: 60_000,
          intervalMs: 200,
          what: 'the default ServiceAccount (kube-controller-manager makes it)',
        },
      );
      return { CLUSTER_KIND: 'real' };
    },
    async down() {
      // nothing of its own
    },
  };
}

export function realClusterComponents(): ClusterComponent[] {
  return [
    hostPackages(),
    k8sBinaries(),
    hostNetwork(),
    registries(),
    testImages(),
    kruiseImage(),
    pki(),
    ...controlPlane(),
    nodes(),
    workloadsReady(),
  ];
}
