// Original file: proto/api.proto

import type { ContainerMetadata as _runtime_v1_ContainerMetadata, ContainerMetadata__Output as _runtime_v1_ContainerMetadata__Output } from '../../runtime/v1/ContainerMetadata.js';
import type { ImageSpec as _runtime_v1_ImageSpec, ImageSpec__Output as _runtime_v1_ImageSpec__Output } from '../../runtime/v1/ImageSpec.js';
import type { ContainerState as _runtime_v1_ContainerState, ContainerState__Output as _runtime_v1_ContainerState__Output } from '../../runtime/v1/ContainerState.js';
import type { Long } from '@grpc/proto-loader';

export interface Container {
  'id'?: (string);
  'pod_sandbox_id'?: (string);
  'metadata'?: (_runtime_v1_ContainerMetadata | null);
  'image'?: (_runtime_v1_ImageSpec | null);
  'image_ref'?: (string);
  'state'?: (_runtime_v1_ContainerState);
  'created_at'?: (number | string | Long);
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
  'image_id'?: (string);
}

export interface Container__Output {
  'id': (string);
  'pod_sandbox_id': (string);
  'metadata': (_runtime_v1_ContainerMetadata__Output | null);
  'image': (_runtime_v1_ImageSpec__Output | null);
  'image_ref': (string);
  'state': (_runtime_v1_ContainerState__Output);
  'created_at': (string);
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
  'image_id': (string);
}
