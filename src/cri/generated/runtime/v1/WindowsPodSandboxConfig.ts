// Original file: proto/api.proto

import type { WindowsSandboxSecurityContext as _runtime_v1_WindowsSandboxSecurityContext, WindowsSandboxSecurityContext__Output as _runtime_v1_WindowsSandboxSecurityContext__Output } from '../../runtime/v1/WindowsSandboxSecurityContext.js';

export interface WindowsPodSandboxConfig {
  'security_context'?: (_runtime_v1_WindowsSandboxSecurityContext | null);
}

export interface WindowsPodSandboxConfig__Output {
  'security_context': (_runtime_v1_WindowsSandboxSecurityContext__Output | null);
}
