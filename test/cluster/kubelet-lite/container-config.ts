// CreateContainer's config as kubelet generates it (kuberuntime_container.go#generateContainerConfig): metadata
// {name, attempt = restartCount}, image, command/args with $(VAR) expansion, env, mounts (volumes and the
// termination-message file), labels/annotations (labels.ts), log path <name>/<restartCount>.log, namespaces.
import type { ContainerConfig, KeyValue, Mount } from '../../../src/cri/types.js';
import { expand } from './expansion.js';
import { containerHash } from './hash.js';
import { containerAnnotations, containerLabels } from './labels.js';
import type { Container, Pod } from './types.js';

export interface ContainerInputs {
  pod: Pod;
  container: Container;
  restartCount: number;
  /** The image as the runtime knows it (image reference or id). */
  image: string;
  env: KeyValue[];
  volumePaths: Map<string, string>;
  terminationMessageFile?: string;
}

export class ContainerConfigError extends Error {}

export function containerConfig(inputs: ContainerInputs): ContainerConfig {
  const { pod, container, restartCount, env } = inputs;
  const lookup = (name: string): string | undefined => env.find((e) => e.key === name)?.value;
  const mounts: Mount[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const host = inputs.volumePaths.get(vm.name);
    if (host === undefined)
      throw new ContainerConfigError(`cannot find volume "${vm.name}" to mount into container "${container.name}"`);
    mounts.push({
      container_path: vm.mountPath,
      host_path: vm.subPath ? `${host}/${vm.subPath}` : host,
      readonly: vm.readOnly ?? false,
    });
  }
  if (inputs.terminationMessageFile) {
    mounts.push({
      container_path: container.terminationMessagePath ?? '/dev/termination-log',
      host_path: inputs.terminationMessageFile,
    });
  }
  const sc = container.securityContext ?? {};
  const psc = pod.spec.securityContext ?? {};
  const runAsUser = sc.runAsUser ?? psc.runAsUser;
  const runAsGroup = sc.runAsGroup ?? psc.runAsGroup;
  return {
    metadata: { name: container.name, attempt: restartCount },
    image: { image: inputs.image, user_specified_image: container.image },
    command: (container.command ?? []).map((a) => expand(a, lookup)),
    args: (container.args ?? []).map((a) => expand(a, lookup)),
    working_dir: container.workingDir ?? '',
    envs: env,
    mounts,
    labels: containerLabels(pod, container),
    annotations: containerAnnotations(pod, container, restartCount, containerHash(container)),
    log_path: `${container.name}/${restartCount}.log`,
    stdin: container.stdin ?? false,
    tty: container.tty ?? false,
    linux: {
      security_context: {
        privileged: sc.privileged ?? false,
        namespace_options: {
          network: pod.spec.hostNetwork ? 'NODE' : 'POD',
          pid: pod.spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
          ipc: 'POD',
        },
        run_as_user: runAsUser !== undefined ? { value: runAsUser } : undefined,
        run_as_group: runAsGroup !== undefined ? { value: runAsGroup } : undefined,
        readonly_rootfs: sc.readOnlyRootFilesystem ?? false,
        capabilities: sc.capabilities
          ? { add_capabilities: sc.capabilities.add ?? [], drop_capabilities: sc.capabilities.drop ?? [] }
          : undefined,
      },
    },
  };
}
