// Original file: proto/api.proto


export interface ImageFsInfoRequest {
}

export interface ImageFsInfoRequest__Output {
}
