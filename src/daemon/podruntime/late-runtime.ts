// The node's container runtime as a controller holds it from construction, although the agent connects to it only
// after the controller has started (src/daemon/runtime-connection.ts).
import type { ContainerRuntime } from './pod-containers.js';

/** Forwards to the runtime once `ready` has resolved (each reconcile awaits it first); fails before that. */
export class LateRuntime implements ContainerRuntime {
  private connected?: ContainerRuntime;

  constructor(private readonly connect: (signal: AbortSignal) => Promise<ContainerRuntime>) {}

  /** Wait for the runtime to be connected (at once after the first time). */
  async ready(signal: AbortSignal): Promise<void> {
    this.connected ??= await this.connect(signal);
  }

  listContainers: ContainerRuntime['listContainers'] = (...a) => this.runtime().listContainers(...a);
  containerStatus: ContainerRuntime['containerStatus'] = (...a) => this.runtime().containerStatus(...a);
  stopContainer: ContainerRuntime['stopContainer'] = (...a) => this.runtime().stopContainer(...a);
  execSync: ContainerRuntime['execSync'] = (...a) => this.runtime().execSync(...a);

  private runtime(): ContainerRuntime {
    if (!this.connected) throw new Error('the container runtime is not connected yet');
    return this.connected;
  }
}
