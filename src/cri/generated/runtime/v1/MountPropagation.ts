// Original file: proto/api.proto

export const MountPropagation = {
  PROPAGATION_PRIVATE: 'PROPAGATION_PRIVATE',
  PROPAGATION_HOST_TO_CONTAINER: 'PROPAGATION_HOST_TO_CONTAINER',
  PROPAGATION_BIDIRECTIONAL: 'PROPAGATION_BIDIRECTIONAL',
} as const;

export type MountPropagation =
  | 'PROPAGATION_PRIVATE'
  | 0
  | 'PROPAGATION_HOST_TO_CONTAINER'
  | 1
  | 'PROPAGATION_BIDIRECTIONAL'
  | 2

export type MountPropagation__Output = typeof MountPropagation[keyof typeof MountPropagation]
