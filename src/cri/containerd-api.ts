// containerd's own gRPC API on the runtime's socket (the CRI socket of a containerd node), in the CRI plugin's
// namespace (k8s.io): the services written in proto/containerd/ (images: pins; content: pull progress), on one
// channel. A call names the namespace in the `containerd-namespace` header; failures come back as
// ContainerdApiError with gRPC's code name (another runtime answers Unimplemented).
import { join } from 'node:path';
import { Client, Metadata, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { loadSync, type MethodDefinition } from '@grpc/proto-loader';
import { isRecord } from '../util/is-record.js';
import { packageRoot } from '../util/repo-root.js';
import { socketPathOf } from './client.js';
import { PROTO_LOADER_OPTIONS } from './proto.js';

/** The namespace containerd's CRI plugin keeps Kubernetes' images in. */
export const CRI_CONTAINERD_NAMESPACE = 'k8s.io';
const CALL_TIMEOUT_MS = 10_000;

export type ContainerdMethod = MethodDefinition<object, unknown, unknown, unknown>;

/** A call to containerd's own API that failed, with gRPC's code name. */
export class ContainerdApiError extends Error {
  constructor(
    readonly code: 'NotFound' | 'Unimplemented' | 'PermissionDenied' | 'Unavailable' | 'Other',
    message: string,
  ) {
    super(message);
    this.name = 'ContainerdApiError';
  }
}

const services = new Map<string, Record<string, ContainerdMethod>>();

/** The methods of a service of proto/containerd/<file>, checked to be there; parsed once per process. */
export function containerdService<M extends string>(
  file: string,
  service: string,
  methods: readonly M[],
): Record<M, ContainerdMethod> {
  let known = services.get(service);
  if (!known) {
    const dir = join(packageRoot(), 'proto', 'containerd');
    const loaded = loadSync(join(dir, file), { ...PROTO_LOADER_OPTIONS, includeDirs: [dir] });
    const definition = loaded[service];
    if (!isRecord(definition)) throw new Error(`proto/containerd/${file} has no service ${service}`);
    known = {};
    for (const [name, method] of Object.entries(definition)) {
      // proto-loader's service record holds one MethodDefinition per method
      if (isRecord(method) && typeof method.path === 'string') known[name] = method as unknown as ContainerdMethod;
    }
    services.set(service, known);
  }
  for (const method of methods) {
    if (!known[method]) throw new Error(`proto/containerd/${file}: ${service} has no method ${method}`);
  }
  return known;
}

/** A record's `labels` map as containerd returns it, the string values only. */
export function stringLabels(value: Record<string, unknown>): Record<string, string> {
  const labels: Record<string, string> = {};
  if (isRecord(value.labels)) {
    for (const [key, label] of Object.entries(value.labels)) if (typeof label === 'string') labels[key] = label;
  }
  return labels;
}

/** containerd's filter syntax: a quoted field path, `==`, and the value, quoted unless it is a plain word. */
export function labelFilter(key: string, value: string): string {
  return `labels.${JSON.stringify(key)}==${/^[A-Za-z0-9_.-]+$/.test(value) ? value : JSON.stringify(value)}`;
}

function codeOf(err: ServiceError): ContainerdApiError['code'] {
  switch (err.code) {
    case GrpcStatus.NOT_FOUND:
      return 'NotFound';
    case GrpcStatus.UNIMPLEMENTED:
      return 'Unimplemented';
    case GrpcStatus.PERMISSION_DENIED:
      return 'PermissionDenied';
    case GrpcStatus.UNAVAILABLE:
      return 'Unavailable';
    default:
      return 'Other';
  }
}

/** One channel to containerd's socket, namespace k8s.io. */
export class ContainerdChannel {
  readonly socketPath: string;
  private readonly client: Client;

  constructor(socket: string) {
    this.socketPath = socketPathOf(socket);
    this.client = new Client(`unix://${this.socketPath}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
    });
  }

  unary(method: ContainerdMethod, request: object): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        this.metadata(),
        { deadline: this.deadline() },
        (err, response) => (err ? reject(this.error(method, err)) : resolve(response)),
      );
    });
  }

  /** A server-streaming call, every message collected. */
  stream(method: ContainerdMethod, request: object): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      const messages: unknown[] = [];
      const call = this.client.makeServerStreamRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        request,
        this.metadata(),
        { deadline: this.deadline() },
      );
      call.on('data', (message: unknown) => messages.push(message));
      call.on('error', (err: ServiceError) => reject(this.error(method, err)));
      call.on('end', () => resolve(messages));
    });
  }

  close(): void {
    this.client.close();
  }

  private metadata(): Metadata {
    const metadata = new Metadata();
    metadata.set('containerd-namespace', CRI_CONTAINERD_NAMESPACE);
    return metadata;
  }

  private deadline(): Date {
    return new Date(Date.now() + CALL_TIMEOUT_MS);
  }

  private error(method: ContainerdMethod, err: ServiceError): ContainerdApiError {
    const name = method.path.split('/').pop() ?? method.path;
    return new ContainerdApiError(
      codeOf(err),
      `containerd ${name} on ${this.socketPath}: ${err.details || err.message}`,
    );
  }
}
