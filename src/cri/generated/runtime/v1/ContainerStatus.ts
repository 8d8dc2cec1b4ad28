// Original file: proto/api.proto

import type { ContainerMetadata as _runtime_v1_ContainerMetadata, ContainerMetadata__Output as _runtime_v1_ContainerMetadata__Output } from '../../runtime/v1/ContainerMetadata.js';
import type { ContainerState as _runtime_v1_ContainerState, ContainerState__Output as _runtime_v1_ContainerState__Output } from '../../runtime/v1/ContainerState.js';
import type { ImageSpec as _runtime_v1_ImageSpec, ImageSpec__Output as _runtime_v1_ImageSpec__Output } from '../../runtime/v1/ImageSpec.js';
import type { Mount as _runtime_v1_Mount, Mount__Output as _runtime_v1_Mount__Output } from '../../runtime/v1/Mount.js';
import type { ContainerResources as _runtime_v1_ContainerResources, ContainerResources__Output as _runtime_v1_ContainerResources__Output } from '../../runtime/v1/ContainerResources.js';
import type { ContainerUser as _runtime_v1_ContainerUser, ContainerUser__Output as _runtime_v1_ContainerUser__Output } from '../../runtime/v1/ContainerUser.js';
import type { Long } from '@grpc/proto-loader';

export interface ContainerStatus {
  'id'?: (string);
  'metadata'?: (_runtime_v1_ContainerMetadata | null);
  'state'?: (_runtime_v1_ContainerState);
  'created_at'?: (number | string | Long);
  'started_at'?: (number | string | Long);
  'finished_at'?: (number | string | Long);
  'exit_code'?: (number);
  'image'?: (_runtime_v1_ImageSpec | null);
  'image_ref'?: (string);
  'reason'?: (string);
  'message'?: (string);
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
  'mounts'?: (_runtime_v1_Mount)[];
  'log_path'?: (string);
  'resources'?: (_runtime_v1_ContainerResources | null);
  'image_id'?: (string);
  'user'?: (_runtime_v1_ContainerUser | null);
  'image_source'?: (string);
}

export interface ContainerStatus__Output {
  'id': (string);
  'metadata': (_runtime_v1_ContainerMetadata__Output | null);
  'state': (_runtime_v1_ContainerState__Output);
  'created_at': (string);
  'started_at': (string);
  'finished_at': (string);
  'exit_code': (number);
  'image': (_runtime_v1_ImageSpec__Output | null);
  'image_ref': (string);
  'reason': (string);
  'message': (string);
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
  'mounts': (_runtime_v1_Mount__Output)[];
  'log_path': (string);
  'resources': (_runtime_v1_ContainerResources__Output | null);
  'image_id': (string);
  'user': (_runtime_v1_ContainerUser__Output | null);
  'image_source': (string);
}
