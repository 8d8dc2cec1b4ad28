// Loads proto/api.proto (CRI runtime.v1) once per process and hands out the two service definitions.
// Options are fixed: keepCase (snake_case keys, as the generated types have them), int64 as decimal strings,
// enums as their names, defaults filled in, virtual oneof fields.
import { join } from 'node:path';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { packageRoot } from '../util/repo-root.js';
import type { ProtoGrpcType } from './generated/api.js';
import type { ImageServiceDefinition } from './generated/runtime/v1/ImageService.js';
import type { RuntimeServiceDefinition } from './generated/runtime/v1/RuntimeService.js';

export const PROTO_LOADER_OPTIONS: Readonly<Options> = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});

export interface CriServices {
  runtime: RuntimeServiceDefinition;
  image: ImageServiceDefinition;
}

let loaded: CriServices | undefined;

/** Path of the shipped CRI proto. */
export function criProtoPath(): string {
  return join(packageRoot(), 'proto', 'api.proto');
}

/** The RuntimeService and ImageService definitions; parsed on first use (~40 ms), then cached. */
export function criServices(): CriServices {
  if (!loaded) {
    const definition = loadSync(criProtoPath(), { ...PROTO_LOADER_OPTIONS });
    // Cast needed: proto-loader builds these from the .proto at run time; the generated types describe the same file.
    const root = loadPackageDefinition(definition) as unknown as ProtoGrpcType;
    loaded = { runtime: root.runtime.v1.RuntimeService.service, image: root.runtime.v1.ImageService.service };
  }
  return loaded;
}
