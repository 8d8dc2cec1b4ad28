// The Node of one kubelet-lite: registered (created, or its status taken over) at start, kept Ready by a Lease
// in kube-node-lease renewed every 10 s (kubelet's nodelease controller, renewInterval = 0.25 x 40 s) and a
// status heartbeat (lastHeartbeatTime); capacity/allocatable with pods: 110; nodeInfo with the runtime version.
import { arch, release } from 'node:os';
import type { Logger } from 'pino';
import {
  CoreResources,
  isAlreadyExists,
  isNotFound,
  type KubeClient,
  type KubeObject,
} from '../../../src/kube/index.js';

export const KUBELET_LITE_VERSION = 'v1.32.0-kubelet-lite';
const LEASE_NAMESPACE = 'kube-node-lease';
const LEASE_DURATION_SECONDS = 40;

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** MicroTime as the API writes it: six fractional digits. */
function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface NodeIdentity {
  name: string;
  hostIP: string;
  /** CRI Version: runtime_name and runtime_version. */
  runtimeName: string;
  runtimeVersion: string;
}

export function nodeStatus(node: NodeIdentity, now: Date, transition?: string): Record<string, unknown> {
  const at = rfc3339(now);
  const cpuArch = arch() === 'x64' ? 'amd64' : arch();
  return {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet-lite is posting ready status',
        lastHeartbeatTime: at,
        lastTransitionTime: transition ?? at,
      },
    ],
    addresses: [
      { type: 'InternalIP', address: node.hostIP },
      { type: 'Hostname', address: node.name },
    ],
    capacity: { cpu: '2', memory: '4Gi', pods: '110', 'ephemeral-storage': '20Gi' },
    allocatable: { cpu: '2', memory: '4Gi', pods: '110', 'ephemeral-storage': '20Gi' },
    daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
    nodeInfo: {
      architecture: cpuArch,
      operatingSystem: 'linux',
      osImage: 'Debian GNU/Linux 12 (bookworm)',
      kernelVersion: release(),
      kubeletVersion: KUBELET_LITE_VERSION,
      kubeProxyVersion: KUBELET_LITE_VERSION,
      containerRuntimeVersion: `${node.runtimeName}://${node.runtimeVersion}`,
      machineID: '',
      systemUUID: '',
      bootID: '',
    },
  };
}

function readyTransition(node: KubeObject | undefined): string | undefined {
  const conditions = (
    node as { status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } }
  )?.status?.conditions;
  const ready = conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? ready.lastTransitionTime : undefined;
}

export class NodeHeartbeat {
  private leaseTimer?: NodeJS.Timeout;
  private statusTimer?: NodeJS.Timeout;
  private nodeUid?: string;
  private transition?: string;

  constructor(
    private readonly kube: KubeClient,
    private readonly node: NodeIdentity,
    private readonly periods: { leaseRenewMs: number; nodeStatusMs: number },
    private readonly logger: Logger,
  ) {}

  /** Create the Node or take over its status; then the lease. */
  async register(): Promise<void> {
    const now = new Date();
    let existing: KubeObject | undefined;
    try {
      existing = await this.kube.get(CoreResources.nodes, this.node.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!existing) {
      try {
        existing = await this.kube.create(CoreResources.nodes, {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: this.node.name,
            labels: {
              'kubernetes.io/hostname': this.node.name,
              'kubernetes.io/os': 'linux',
              'kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
              'beta.kubernetes.io/os': 'linux',
              'beta.kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
            },
          },
          spec: {},
        } as KubeObject);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        existing = await this.kube.get(CoreResources.nodes, this.node.name);
      }
    }
    this.nodeUid = existing.metadata?.uid;
    this.transition = readyTransition(existing) ?? rfc3339(now);
    await this.postStatus(now);
    await this.renewLease(now);
  }

  start(): void {
    this.leaseTimer = setInterval(() => void this.renewLease(new Date()), this.periods.leaseRenewMs);
    this.statusTimer = setInterval(() => void this.postStatus(new Date()), this.periods.nodeStatusMs);
    this.leaseTimer.unref();
    this.statusTimer.unref();
  }

  stop(): void {
    clearInterval(this.leaseTimer);
    clearInterval(this.statusTimer);
  }

  private async postStatus(now: Date): Promise<void> {
    try {
      await this.kube.patch(
        CoreResources.nodes,
        this.node.name,
        { status: nodeStatus(this.node, now, this.transition) },
        {
          type: 'merge',
          subresource: 'status',
        },
      );
    } catch (err) {
      this.logger.warn({ err, node: this.node.name }, 'node status update failed');
    }
  }

  private async renewLease(now: Date): Promise<void> {
    const spec = {
      holderIdentity: this.node.name,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      renewTime: microTime(now),
    };
    try {
      await this.kube.patch(
        CoreResources.leases,
        this.node.name,
        { spec },
        { type: 'merge', namespace: LEASE_NAMESPACE },
      );
    } catch (err) {
      if (!isNotFound(err)) {
        this.logger.warn({ err, node: this.node.name }, 'lease renewal failed');
        return;
      }
      try {
        await this.kube.create(
          CoreResources.leases,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: {
              name: this.node.name,
              namespace: LEASE_NAMESPACE,
              ownerReferences: this.nodeUid
                ? [{ apiVersion: 'v1', kind: 'Node', name: this.node.name, uid: this.nodeUid }]
                : undefined,
            },
            spec,
          } as KubeObject,
          { namespace: LEASE_NAMESPACE },
        );
      } catch (createErr) {
        if (!isAlreadyExists(createErr))
          this.logger.warn({ err: createErr, node: this.node.name }, 'lease creation failed');
      }
    }
  }
}
