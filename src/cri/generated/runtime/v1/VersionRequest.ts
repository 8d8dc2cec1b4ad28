// Original file: proto/api.proto


export interface VersionRequest {
  'version'?: (string);
}

export interface VersionRequest__Output {
  'version': (string);
}
