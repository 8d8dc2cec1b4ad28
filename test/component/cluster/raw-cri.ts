// A minimal CRI client for the cluster tests only: proto/api.proto loaded at run time, unary calls with a deadline.
// (The project's real client is src/cri; these tests check the environment, not that client.)
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';
import { packageRoot } from '../../../src/util/repo-root.js';

type Callback = (err: grpc.ServiceError | null, response: any) => void;
type UnaryMethod = (request: object, options: grpc.CallOptions, callback: Callback) => void;

export interface RawCri {
  runtime(method: string, request: object): Promise<any>;
  image(method: string, request: object): Promise<any>;
  close(): void;
}

export function rawCri(socket: string, timeoutMs = 30_000): RawCri {
  const definition = protoLoader.loadSync(join(packageRoot(), 'proto', 'api.proto'), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const v1 = (grpc.loadPackageDefinition(definition) as any).runtime.v1;
  const address = `unix://${socket}`;
  const runtime = new v1.RuntimeService(address, grpc.credentials.createInsecure()) as grpc.Client;
  const image = new v1.ImageService(address, grpc.credentials.createInsecure()) as grpc.Client;
  const call = (client: grpc.Client, method: string, request: object): Promise<any> =>
    new Promise((resolve, reject) => {
      const fn = (client as unknown as Record<string, UnaryMethod>)[method];
      if (typeof fn !== 'function') {
        reject(new Error(`no CRI method ${method}`));
        return;
      }
      fn.call(client, request, { deadline: Date.now() + timeoutMs }, (err, response) =>
        err ? reject(err) : resolve(response),
      );
    });
  return {
    runtime: (method, request) => call(runtime, method, request),
    image: (method, request) => call(image, method, request),
    close: () => {
      runtime.close();
      image.close();
    },
  };
}
