// Original file: proto/api.proto

import type { Long } from '@grpc/proto-loader';

export interface HugepageLimit {
  'page_size'?: (string);
  'limit'?: (number | string | Long);
}

export interface HugepageLimit__Output {
  'page_size': (string);
  'limit': (string);
}
