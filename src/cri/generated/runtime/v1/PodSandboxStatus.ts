// Original file: proto/api.proto

import type { PodSandboxMetadata as _runtime_v1_PodSandboxMetadata, PodSandboxMetadata__Output as _runtime_v1_PodSandboxMetadata__Output } from '../../runtime/v1/PodSandboxMetadata.js';
import type { PodSandboxState as _runtime_v1_PodSandboxState, PodSandboxState__Output as _runtime_v1_PodSandboxState__Output } from '../../runtime/v1/PodSandboxState.js';
import type { PodSandboxNetworkStatus as _runtime_v1_PodSandboxNetworkStatus, PodSandboxNetworkStatus__Output as _runtime_v1_PodSandboxNetworkStatus__Output } from '../../runtime/v1/PodSandboxNetworkStatus.js';
import type { LinuxPodSandboxStatus as _runtime_v1_LinuxPodSandboxStatus, LinuxPodSandboxStatus__Output as _runtime_v1_LinuxPodSandboxStatus__Output } from '../../runtime/v1/LinuxPodSandboxStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface PodSandboxStatus {
  'id'?: (string);
  'metadata'?: (_runtime_v1_PodSandboxMetadata | null);
  'state'?: (_runtime_v1_PodSandboxState);
  'created_at'?: (number | string | Long);
  'network'?: (_runtime_v1_PodSandboxNetworkStatus | null);
  'linux'?: (_runtime_v1_LinuxPodSandboxStatus | null);
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
  'runtime_handler'?: (string);
}

export interface PodSandboxStatus__Output {
  'id': (string);
  'metadata': (_runtime_v1_PodSandboxMetadata__Output | null);
  'state': (_runtime_v1_PodSandboxState__Output);
  'created_at': (string);
  'network': (_runtime_v1_PodSandboxNetworkStatus__Output | null);
  'linux': (_runtime_v1_LinuxPodSandboxStatus__Output | null);
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
  'runtime_handler': (string);
}
