// Original file: proto/api.proto


export interface CDIDevice {
  'name'?: (string);
}

export interface CDIDevice__Output {
  'name': (string);
}
