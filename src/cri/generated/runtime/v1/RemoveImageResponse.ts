// Original file: proto/api.proto


export interface RemoveImageResponse {
}

export interface RemoveImageResponse__Output {
}
