// Original file: proto/api.proto

import type { LinuxContainerResources as _runtime_v1_LinuxContainerResources, LinuxContainerResources__Output as _runtime_v1_LinuxContainerResources__Output } from '../../runtime/v1/LinuxContainerResources.js';
import type { WindowsContainerResources as _runtime_v1_WindowsContainerResources, WindowsContainerResources__Output as _runtime_v1_WindowsContainerResources__Output } from '../../runtime/v1/WindowsContainerResources.js';

export interface ContainerResources {
  'linux'?: (_runtime_v1_LinuxContainerResources | null);
  'windows'?: (_runtime_v1_WindowsContainerResources | null);
}

export interface ContainerResources__Output {
  'linux': (_runtime_v1_LinuxContainerResources__Output | null);
  'windows': (_runtime_v1_WindowsContainerResources__Output | null);
}
