// Original file: proto/api.proto


export interface StartContainerRequest {
  'container_id'?: (string);
}

export interface StartContainerRequest__Output {
  'container_id': (string);
}
