// Objects and helpers shared by the kube component tests.
import { KubeClient } from '../../../../src/kube/client.js';
import type { Connection } from '../../../../src/kube/credentials/connection.js';
import type { KubeMetrics } from '../../../../src/kube/metrics.js';
import type { KubeObject } from '../../../../src/kube/object.js';

export function plainConnection(url: string): Connection {
  return { server: url, insecureSkipTLSVerify: false, auth: { kind: 'none' }, origin: `emulator ${url}` };
}

export function clientFor(url: string, metrics?: KubeMetrics, userAgent = 'kd-kube-component-test'): KubeClient {
  return new KubeClient(plainConnection(url), { metrics, userAgent, timeoutMs: 10_000 });
}

export interface Pod extends KubeObject {
  spec: {
    nodeName?: string;
    schedulerName?: string;
    containers: { name: string; image: string; env?: { name: string; value: string }[] }[];
  };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  };
}

/** A pod of about 4 KB, like a real one with a few env variables and labels. */
export function podFor(name: string, nodeName: string, namespace = 'default'): Pod {
  return {
    metadata: {
      name,
      namespace,
      labels: { app: 'memory', 'pod-template-hash': 'abcdef1234', index: name.replace(/\D/g, '') || '0' },
      annotations: { 'kruise.io/description': 'x'.repeat(1500) },
    },
    spec: {
      nodeName,
      containers: [
        {
          name: 'main',
          image: 'registry.local/busybox:1.36',
          env: Array.from({ length: 30 }, (_, i) => ({ name: `VAR_${i}`, value: `value-${i}-${'y'.repeat(40)}` })),
        },
        { name: 'sidecar', image: 'registry.local/busybox:1.36' },
      ],
    },
  };
}

/** A pod no scheduler takes (so no kubelet runs it): on a real cluster nobody but the test writes its status. */
export function unscheduledPod(name: string, namespace: string): Pod {
  const pod = podFor(name, '', namespace);
  const { nodeName: _unbound, ...spec } = pod.spec;
  return { ...pod, spec: { ...spec, schedulerName: 'kd-test-no-scheduler' } };
}
