// Original file: proto/api.proto

import type { Namespace as _runtime_v1_Namespace, Namespace__Output as _runtime_v1_Namespace__Output } from '../../runtime/v1/Namespace.js';

export interface LinuxPodSandboxStatus {
  'namespaces'?: (_runtime_v1_Namespace | null);
}

export interface LinuxPodSandboxStatus__Output {
  'namespaces': (_runtime_v1_Namespace__Output | null);
}
