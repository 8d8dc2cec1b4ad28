// Components "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler" (real cluster): the control
// plane as host processes on the host's node-network address, but etcd, which has neither TLS nor authentication
// here, on a loopback address of its own (127.X.255.1): nothing on the node network or in a pod reaches it. The API server runs with Node,RBAC authorization,
// NodeRestriction and the default admission plugins (webhooks included), service-account tokens signed with the
// pki's sa.key; the controller manager with per-controller service-account credentials, so StatefulSets,
// Deployments, garbage collection and token controllers work; leader election is off (one of each).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterComponent, ClusterContext } from '../component.js';
import type { ComponentStatus, ComponentWithStatus } from '../runtime/component-status.js';
import { ClusterError } from '../runtime/errors.js';
import { httpStatus } from '../runtime/http-probe.js';
import { runningPid } from '../runtime/processes.js';
import { apiRequest } from './api-client.js';
import { binaryPathsOf } from './binaries.js';
import { FEATURE_GATES } from './feature-gates.js';
import { layoutFromContext } from './context.js';
import { API_SERVER_PORT, type K8sLayout } from './layout.js';
import { admissionConfigPath, kubeconfigPath } from './pki.js';
import { ensureProcess, stopOwnProcess, waitForProcess, type ProcessSpec } from './process.js';

const READY_TIMEOUT_MS = 90_000;

async function requireLayout(ctx: ClusterContext, component: string): Promise<K8sLayout> {
  const layout = await layoutFromContext(ctx);
  if (!layout) throw new ClusterError(`${component} needs the host-network component first`);
  return layout;
}

function etcdSpec(layout: K8sLayout): ProcessSpec {
  return {
    name: 'etcd',
    command: binaryPathsOf(layout.dir).etcd,
    args: [
      `--name=kd-${layout.id}`,
      `--data-dir=${layout.etcdDataDir}`,
      `--listen-client-urls=${layout.etcdClientUrl}`,
      `--advertise-client-urls=${layout.etcdClientUrl}`,
      `--listen-peer-urls=${layout.etcdPeerUrl}`,
      `--initial-advertise-peer-urls=${layout.etcdPeerUrl}`,
      `--initial-cluster=kd-${layout.id}=${layout.etcdPeerUrl}`,
      '--listen-metrics-urls=',
      // test data: losing it on a machine crash is fine, and fsync on a shared disk is slow
      '--unsafe-no-fsync',
      '--watch-progress-notify-interval=5s',
      '--log-level=warn',
    ],
    marker: layout.etcdDataDir,
    pidFile: join(layout.runDir, 'etcd.pid'),
    logFile: join(layout.logDir, 'etcd.log'),
  };
}

function apiServerSpec(layout: K8sLayout): ProcessSpec {
  const pki = (file: string): string => join(layout.pkiDir, file);
  return {
    name: 'kube-apiserver',
    command: join(binaryPathsOf(layout.dir).kubeBinDir, 'kube-apiserver'),
    args: [
      `--etcd-servers=${layout.etcdClientUrl}`,
      `--bind-address=${layout.hostIp}`,
      `--advertise-address=${layout.hostIp}`,
      `--secure-port=${API_SERVER_PORT}`,
      `--cert-dir=${join(layout.k8sDir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki('apiserver.crt')}`,
      `--tls-private-key-file=${pki('apiserver.key')}`,
      `--client-ca-file=${pki('ca.crt')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki('sa.pub')}`,
      `--service-account-signing-key-file=${pki('sa.key')}`,
      `--service-cluster-ip-range=${layout.serviceCidr}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      // admission webhooks are called with the client certificate kube-apiserver-webhook-client (pki.ts)
      `--admission-control-config-file=${admissionConfigPath(layout)}`,
      '--allow-privileged=true',
      `--kubelet-client-certificate=${pki('apiserver-kubelet-client.crt')}`,
      `--kubelet-client-key=${pki('apiserver-kubelet-client.key')}`,
      `--kubelet-certificate-authority=${pki('ca.crt')}`,
      '--kubelet-preferred-address-types=InternalIP',
      '--profiling=false',
      '--event-ttl=1h',
      // The API server runs on the host, which has no kube-proxy (each node has its own): a webhook or aggregated
      // API behind a Service is called at its endpoints' pod IPs (routed to the nodes), not at its ClusterIP.
      '--enable-aggregator-routing=true',
      `--feature-gates=${FEATURE_GATES.join(',')}`,
      '-v=1',
    ],
    marker: join(layout.k8sDir, 'apiserver-certs'),
    pidFile: join(layout.runDir, 'kube-apiserver.pid'),
    logFile: join(layout.logDir, 'kube-apiserver.log'),
    stopGraceMs: 5_000,
  };
}

function controllerManagerSpec(layout: K8sLayout): ProcessSpec {
  const kubeconfig = kubeconfigPath(layout, 'controller-manager');
  return {
    name: 'kube-controller-manager',
    command: join(binaryPathsOf(layout.dir).kubeBinDir, 'kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--bind-address=${layout.hostIp}`,
      '--secure-port=10257',
      '--leader-elect=false',
      `--service-account-private-key-file=${join(layout.pkiDir, 'sa.key')}`,
      `--root-ca-file=${join(layout.pkiDir, 'ca.crt')}`,
      `--cluster-signing-cert-file=${join(layout.pkiDir, 'ca.crt')}`,
      `--cluster-signing-key-file=${join(layout.pkiDir, 'ca.key')}`,
      '--use-service-account-credentials=true',
      `--service-cluster-ip-range=${layout.serviceCidr}`,
      '-v=1',
    ],
    marker: kubeconfig,
    pidFile: join(layout.runDir, 'kube-controller-manager.pid'),
    logFile: join(layout.logDir, 'kube-controller-manager.log'),
  };
}

function schedulerSpec(layout: K8sLayout): ProcessSpec {
  const kubeconfig = kubeconfigPath(layout, 'scheduler');
  return {
    name: 'kube-scheduler',
    command: join(binaryPathsOf(layout.dir).kubeBinDir, 'kube-scheduler'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--bind-address=${layout.hostIp}`,
      '--secure-port=10259',
      '--leader-elect=false',
      '-v=1',
    ],
    marker: kubeconfig,
    pidFile: join(layout.runDir, 'kube-scheduler.pid'),
    logFile: join(layout.logDir, 'kube-scheduler.log'),
  };
}

async function insecureHealthz(url: string): Promise<boolean> {
  // kube-controller-manager and kube-scheduler serve /healthz with a self-signed certificate, to anyone
  const { request } = await import('node:https');
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

interface ControlPlaneProcess {
  name: string;
  spec(layout: K8sLayout): ProcessSpec;
  what: string;
  ready(layout: K8sLayout): Promise<boolean>;
  env(layout: K8sLayout): Record<string, string>;
}

const PROCESSES: ControlPlaneProcess[] = [
  {
    name: 'etcd',
    spec: etcdSpec,
    what: '/health to answer 200',
    ready: async (layout) => (await httpStatus(`${layout.etcdClientUrl}/health`)) === 200,
    env: (layout) => ({ ETCD_URL: layout.etcdClientUrl }),
  },
  {
    name: 'kube-apiserver',
    spec: apiServerSpec,
    what: '/readyz to answer 200',
    ready: async (layout) => (await apiRequest(layout, '/readyz')).status === 200,
    env: (layout) => ({ KUBE_APISERVER: layout.apiServerUrl }),
  },
  {
    name: 'kube-controller-manager',
    spec: controllerManagerSpec,
    what: '/healthz to answer 200',
    ready: (layout) => insecureHealthz(`https://${layout.hostIp}:10257/healthz`),
    env: () => ({}),
  },
  {
    name: 'kube-scheduler',
    spec: schedulerSpec,
    what: '/healthz to answer 200',
    ready: (layout) => insecureHealthz(`https://${layout.hostIp}:10259/healthz`),
    env: () => ({}),
  },
];

function controlPlaneComponent(process: ControlPlaneProcess): ComponentWithStatus {
  return {
    name: process.name,
    async up(ctx: ClusterContext) {
      const layout = await requireLayout(ctx, process.name);
      await mkdir(layout.k8sDir, { recursive: true });
      const spec = process.spec(layout);
      const state = await ensureProcess(spec, ctx.log);
      await waitForProcess(spec, state.pid, process.what, () => process.ready(layout), READY_TIMEOUT_MS);
      return process.env(layout);
    },
    async down(ctx: ClusterContext) {
      const layout = await layoutFromContext(ctx);
      if (!layout) return;
      await stopOwnProcess(process.spec(layout), ctx.log);
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const layout = await layoutFromContext(ctx);
      if (!layout) return [{ name: process.name, healthy: false, detail: 'not set up' }];
      const spec = process.spec(layout);
      const pid = await runningPid(spec.pidFile, spec.marker);
      if (pid === undefined) return [{ name: process.name, healthy: false, detail: 'not running' }];
      const ready = await process.ready(layout).catch(() => false);
      return [
        {
          name: process.name,
          healthy: ready,
          detail: `PID ${pid}, ${ready ? 'ready' : `not ready (${process.what})`}`,
        },
      ];
    },
  };
}

export function controlPlane(): ClusterComponent[] {
  return PROCESSES.map(controlPlaneComponent);
}
