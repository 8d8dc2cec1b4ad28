// Original file: proto/api.proto

import type { NamespaceMode as _runtime_v1_NamespaceMode, NamespaceMode__Output as _runtime_v1_NamespaceMode__Output } from '../../runtime/v1/NamespaceMode.js';
import type { UserNamespace as _runtime_v1_UserNamespace, UserNamespace__Output as _runtime_v1_UserNamespace__Output } from '../../runtime/v1/UserNamespace.js';

export interface NamespaceOption {
  'network'?: (_runtime_v1_NamespaceMode);
  'pid'?: (_runtime_v1_NamespaceMode);
  'ipc'?: (_runtime_v1_NamespaceMode);
  'target_id'?: (string);
  'userns_options'?: (_runtime_v1_UserNamespace | null);
}

export interface NamespaceOption__Output {
  'network': (_runtime_v1_NamespaceMode__Output);
  'pid': (_runtime_v1_NamespaceMode__Output);
  'ipc': (_runtime_v1_NamespaceMode__Output);
  'target_id': (string);
  'userns_options': (_runtime_v1_UserNamespace__Output | null);
}
