// Original file: proto/api.proto

import type { WindowsNamespaceOption as _runtime_v1_WindowsNamespaceOption, WindowsNamespaceOption__Output as _runtime_v1_WindowsNamespaceOption__Output } from '../../runtime/v1/WindowsNamespaceOption.js';

export interface WindowsSandboxSecurityContext {
  'run_as_username'?: (string);
  'credential_spec'?: (string);
  'host_process'?: (boolean);
  'namespace_options'?: (_runtime_v1_WindowsNamespaceOption | null);
}

export interface WindowsSandboxSecurityContext__Output {
  'run_as_username': (string);
  'credential_spec': (string);
  'host_process': (boolean);
  'namespace_options': (_runtime_v1_WindowsNamespaceOption__Output | null);
}
