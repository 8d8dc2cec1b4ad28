// A promise-based CRI v1 client over a unix socket: one gRPC channel for RuntimeService and ImageService,
// a deadline on every call, typed errors (errors.ts), metrics (metrics.ts), and one retry after a runtime
// restart for the calls where that is safe (policy in methods.ts).
import { isAbsolute, resolve } from 'node:path';
import { Client, Metadata, credentials, status as GrpcStatus } from '@grpc/grpc-js';
import type { ChannelOptions, ServiceError } from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../observability/logger.js';
import { CriError, grpcCodeName, toCriError, type CriErrorContext } from './errors.js';
import { CRI_METHODS, defaultDeadlineMs, type CriMethod } from './methods.js';
import { criMetrics, type CriMetrics } from './metrics.js';
import { criServices } from './proto.js';
import type * as T from './types.js';

/** The request and response type of each RPC. */
export interface CriMethodTypes {
  Version: [T.VersionRequest, T.VersionResponse__Output];
  Status: [T.StatusRequest, T.StatusResponse__Output];
  RunPodSandbox: [T.RunPodSandboxRequest, T.RunPodSandboxResponse__Output];
  StopPodSandbox: [T.StopPodSandboxRequest, T.StopPodSandboxResponse__Output];
  RemovePodSandbox: [T.RemovePodSandboxRequest, T.RemovePodSandboxResponse__Output];
  PodSandboxStatus: [T.PodSandboxStatusRequest, T.PodSandboxStatusResponse__Output];
  ListPodSandbox: [T.ListPodSandboxRequest, T.ListPodSandboxResponse__Output];
  CreateContainer: [T.CreateContainerRequest, T.CreateContainerResponse__Output];
  StartContainer: [T.StartContainerRequest, T.StartContainerResponse__Output];
  StopContainer: [T.StopContainerRequest, T.StopContainerResponse__Output];
  RemoveContainer: [T.RemoveContainerRequest, T.RemoveContainerResponse__Output];
  ListContainers: [T.ListContainersRequest, T.ListContainersResponse__Output];
  ContainerStatus: [T.ContainerStatusRequest, T.ContainerStatusResponse__Output];
  ExecSync: [T.ExecSyncRequest, T.ExecSyncResponse__Output];
  ListImages: [T.ListImagesRequest, T.ListImagesResponse__Output];
  ImageStatus: [T.ImageStatusRequest, T.ImageStatusResponse__Output];
  PullImage: [T.PullImageRequest, T.PullImageResponse__Output];
  RemoveImage: [T.RemoveImageRequest, T.RemoveImageResponse__Output];
  ImageFsInfo: [T.ImageFsInfoRequest, T.ImageFsInfoResponse__Output];
}

export type CriRequest<M extends CriMethod> = CriMethodTypes[M][0];
export type CriResponse<M extends CriMethod> = CriMethodTypes[M][1];

/** The gRPC header containerd reads a call's lease from (its leases.FromContext); see containerd-leases.ts. */
export const CONTAINERD_LEASE_HEADER = 'containerd-lease';

/** Per-call options. */
export interface CriCallOptions {
  /** Deadline of this call in ms (default: the method's, see methods.ts). */
  timeoutMs?: number;
  /** Cancels the call (it then fails with kind Cancelled). */
  signal?: AbortSignal;
  /** containerd: the lease the call's content is written under (the `containerd-lease` header); ignored elsewhere. */
  containerdLease?: string | undefined;
}

export interface CriClientOptions {
  /** Path of the runtime's unix socket; a `unix://` prefix is accepted. */
  socket: string;
  /** Registry for kruise_daemon_cri_* metrics; none recorded without one. */
  registry?: Registry | undefined;
  logger?: Logger | undefined;
  /** Default deadline (ms) for every method, replacing the per-method defaults. */
  timeoutMs?: number | undefined;
  /** Per-method default deadlines (ms), taking precedence over `timeoutMs`. */
  deadlines?: Partial<Record<CriMethod, number>> | undefined;
  /** Longest wait for the channel to come back before the one retry (ms, default 10 s, capped by the deadline). */
  reconnectWaitMs?: number;
}

/** Largest message either way: ListImages/ListContainers on a busy node, ExecSync output (as kubelet). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  // A node-local socket: reconnect quickly after a runtime restart instead of grpc's 1 s .. 120 s backoff. An attempt
  // is one connect(2) on a unix socket, so at most 1 s apart: the runtime's return is seen within about a second
  // however long it was down (with 5 s, the agent took 5.5 s after a 60 s containerd outage).
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
  // Own subchannels: closing or probing one client never disturbs another on the same socket.
  'grpc.use_local_subchannel_pool': 1,
};

/** grpc-js words for a call that failed before any connection existed, i.e. was never sent. */
const UNSENT = /^No connection established|connect (?:ECONNREFUSED|ENOENT|EACCES)/;

/** Strip a unix:// or unix: scheme and make the path absolute. */
export function socketPathOf(socket: string): string {
  const path = socket.replace(/^unix:(?:\/\/)?/, '');
  return isAbsolute(path) ? path : resolve(path);
}

function validDeadline(ms: number | undefined, what: string): number | undefined {
  if (ms === undefined) return undefined;
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`${what} must be a positive number of ms, got ${ms}`);
  return ms;
}

export class CriClient {
  /** Absolute path of the runtime's socket. */
  readonly socketPath: string;
  private readonly channel: Client;
  private readonly metrics: CriMetrics;
  private readonly log: Logger;
  private readonly timeoutMs: number | undefined;
  private readonly deadlines: Partial<Record<CriMethod, number | undefined>>;
  private readonly reconnectWaitMs: number;
  private closed = false;

  constructor(options: CriClientOptions) {
    if (typeof options.socket !== 'string' || options.socket.trim() === '') {
      throw new TypeError('CriClient: socket path is empty');
    }
    this.socketPath = socketPathOf(options.socket.trim());
    this.timeoutMs = validDeadline(options.timeoutMs, 'timeoutMs');
    this.deadlines = {};
    for (const [method, ms] of Object.entries(options.deadlines ?? {}) as [CriMethod, number][]) {
      if (!Object.hasOwn(CRI_METHODS, method))
        throw new TypeError(`CriClient: unknown CRI method ${method} in deadlines`);
      this.deadlines[method] = validDeadline(ms, `deadline of ${method}`);
    }
    this.reconnectWaitMs = validDeadline(options.reconnectWaitMs, 'reconnectWaitMs') ?? 10_000;
    this.metrics = criMetrics(options.registry);
    this.log = (options.logger ?? silentLogger).child({ component: 'cri', socket: this.socketPath });
    criServices(); // parse the proto now, not on the first call
    this.channel = new Client(`unix://${this.socketPath}`, credentials.createInsecure(), CHANNEL_OPTIONS);
  }

  // ------------------------------------------------------------------------------------------ RuntimeService

  /** Runtime name/version and the CRI version it speaks. The agent's runtime loop calls this (its /readyz reads the last answer). */
  version(request: T.VersionRequest = {}, options?: CriCallOptions): Promise<T.VersionResponse__Output> {
    return this.call('Version', request, options);
  }

  /** Runtime conditions (RuntimeReady, NetworkReady). */
  status(request: T.StatusRequest = {}, options?: CriCallOptions): Promise<T.StatusResponse__Output> {
    return this.call('Status', request, options);
  }

  runPodSandbox(request: T.RunPodSandboxRequest, options?: CriCallOptions): Promise<T.RunPodSandboxResponse__Output> {
    return this.call('RunPodSandbox', request, options);
  }

  stopPodSandbox(
    request: T.StopPodSandboxRequest,
    options?: CriCallOptions,
  ): Promise<T.StopPodSandboxResponse__Output> {
    return this.call('StopPodSandbox', request, options);
  }

  removePodSandbox(
    request: T.RemovePodSandboxRequest,
    options?: CriCallOptions,
  ): Promise<T.RemovePodSandboxResponse__Output> {
    return this.call('RemovePodSandbox', request, options);
  }

  /** Fails with kind NotFound when the sandbox does not exist. */
  podSandboxStatus(
    request: T.PodSandboxStatusRequest,
    options?: CriCallOptions,
  ): Promise<T.PodSandboxStatusResponse__Output> {
    return this.call('PodSandboxStatus', request, options);
  }

  listPodSandbox(
    request: T.ListPodSandboxRequest = {},
    options?: CriCallOptions,
  ): Promise<T.ListPodSandboxResponse__Output> {
    return this.call('ListPodSandbox', request, options);
  }

  createContainer(
    request: T.CreateContainerRequest,
    options?: CriCallOptions,
  ): Promise<T.CreateContainerResponse__Output> {
    return this.call('CreateContainer', request, options);
  }

  startContainer(
    request: T.StartContainerRequest,
    options?: CriCallOptions,
  ): Promise<T.StartContainerResponse__Output> {
    return this.call('StartContainer', request, options);
  }

  /** `timeout` is the grace period in seconds; the default deadline grows by it. */
  stopContainer(request: T.StopContainerRequest, options?: CriCallOptions): Promise<T.StopContainerResponse__Output> {
    return this.call('StopContainer', request, options);
  }

  removeContainer(
    request: T.RemoveContainerRequest,
    options?: CriCallOptions,
  ): Promise<T.RemoveContainerResponse__Output> {
    return this.call('RemoveContainer', request, options);
  }

  listContainers(
    request: T.ListContainersRequest = {},
    options?: CriCallOptions,
  ): Promise<T.ListContainersResponse__Output> {
    return this.call('ListContainers', request, options);
  }

  /** Fails with kind NotFound when the container does not exist. */
  containerStatus(
    request: T.ContainerStatusRequest,
    options?: CriCallOptions,
  ): Promise<T.ContainerStatusResponse__Output> {
    return this.call('ContainerStatus', request, options);
  }

  /** Runs a command; a non-zero exit is in `exit_code`, not an error. `timeout` (s) extends the deadline. */
  execSync(request: T.ExecSyncRequest, options?: CriCallOptions): Promise<T.ExecSyncResponse__Output> {
    return this.call('ExecSync', request, options);
  }

  // ------------------------------------------------------------------------------------------ ImageService

  listImages(request: T.ListImagesRequest = {}, options?: CriCallOptions): Promise<T.ListImagesResponse__Output> {
    return this.call('ListImages', request, options);
  }

  /** `image` is null (not an error) when the image is not on the node. */
  imageStatus(request: T.ImageStatusRequest, options?: CriCallOptions): Promise<T.ImageStatusResponse__Output> {
    return this.call('ImageStatus', request, options, { image: request.image?.image ?? '' });
  }

  /**
   * Pulls an image. Registry failures come back typed: AuthenticationFailed (naming the registry),
   * ImageNotFound, RegistryUnreachable, InvalidArgument (bad reference). Not retried once sent.
   */
  pullImage(request: T.PullImageRequest, options?: CriCallOptions): Promise<T.PullImageResponse__Output> {
    const auth = request.auth;
    const withCredentials = Boolean(
      auth && (auth.username || auth.password || auth.auth || auth.identity_token || auth.registry_token),
    );
    return this.call('PullImage', request, options, { image: request.image?.image ?? '', withCredentials });
  }

  /** Removes the image and every other reference to the same image ID. Idempotent. */
  removeImage(request: T.RemoveImageRequest, options?: CriCallOptions): Promise<T.RemoveImageResponse__Output> {
    return this.call('RemoveImage', request, options, { image: request.image?.image ?? '' });
  }

  imageFsInfo(request: T.ImageFsInfoRequest = {}, options?: CriCallOptions): Promise<T.ImageFsInfoResponse__Output> {
    return this.call('ImageFsInfo', request, options);
  }

  // ------------------------------------------------------------------------------------------ channel

  /** Wait until the channel is connected, at most `timeoutMs`; true when it is. */
  waitForReady(timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return new Promise((done) => {
      this.channel.waitForReady(Date.now() + Math.max(0, timeoutMs), (err) => done(!err));
    });
  }

  /** Close the channel; later calls fail with kind Cancelled. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.channel.close();
  }

  // ------------------------------------------------------------------------------------------ calls

  /** Any RPC by name: deadline, metrics, typed errors, and the retry of methods.ts. */
  async call<M extends CriMethod>(
    method: M,
    request: CriRequest<M>,
    options: CriCallOptions = {},
    context: Partial<CriErrorContext> = {},
  ): Promise<CriResponse<M>> {
    const deadlineMs =
      validDeadline(options.timeoutMs, `timeoutMs of ${method}`) ??
      this.deadlines[method] ??
      this.timeoutMs ??
      defaultDeadlineMs(method, requestTimeoutSeconds(request));
    const errorContext: CriErrorContext = { ...context, method, socket: this.socketPath, deadlineMs };
    if (this.closed) {
      throw new CriError('Cancelled', GrpcStatus.CANCELLED, method, 'client closed', '');
    }
    const deadlineAt = Date.now() + deadlineMs;
    try {
      return await this.attempt(method, request, deadlineAt, options.signal, options.containerdLease);
    } catch (first) {
      if (!this.retryable(method, first, deadlineAt, options.signal)) throw toCriError(first, errorContext);
      const waitUntil = Math.min(deadlineAt, Date.now() + this.reconnectWaitMs);
      this.log.warn(
        { method, error: (first as ServiceError).details },
        'CRI runtime unavailable; retrying once the channel is ready',
      );
      const ready = await this.waitForReady(waitUntil - Date.now());
      if (!ready || Date.now() >= deadlineAt) throw toCriError(first, errorContext);
      try {
        return await this.attempt(method, request, deadlineAt, options.signal, options.containerdLease);
      } catch (second) {
        throw toCriError(second, errorContext);
      }
    }
  }

  private retryable(method: CriMethod, err: unknown, deadlineAt: number, signal?: AbortSignal): boolean {
    if (this.closed || signal?.aborted || Date.now() >= deadlineAt) return false;
    const e = err as Partial<ServiceError>;
    if (e.code !== GrpcStatus.UNAVAILABLE) return false;
    return CRI_METHODS[method].retry === 'idempotent' || UNSENT.test(e.details ?? '');
  }

  private attempt<M extends CriMethod>(
    method: M,
    request: CriRequest<M>,
    deadlineAt: number,
    signal?: AbortSignal,
    lease?: string,
  ): Promise<CriResponse<M>> {
    const spec = CRI_METHODS[method];
    const services = criServices();
    const definition = (spec.service === 'runtime' ? services.runtime[method] : services.image[method]) as
      MethodDefinition<CriRequest<M>, unknown, unknown, CriResponse<M>> | undefined;
    if (!definition) throw new Error(`CRI method ${method} is missing from proto/api.proto`);
    return new Promise<CriResponse<M>>((resolvePromise, reject) => {
      if (signal?.aborted) {
        reject(statusError(GrpcStatus.CANCELLED, 'cancelled by the caller before it started'));
        return;
      }
      const started = performance.now();
      const metadata = new Metadata();
      if (lease !== undefined) metadata.set(CONTAINERD_LEASE_HEADER, lease);
      const call = this.channel.makeUnaryRequest<CriRequest<M>, CriResponse<M>>(
        definition.path,
        definition.requestSerialize,
        definition.responseDeserialize,
        request,
        metadata,
        { deadline: new Date(deadlineAt) },
        (err, response) => {
          signal?.removeEventListener('abort', onAbort);
          const seconds = (performance.now() - started) / 1000;
          const code = err ? err.code : GrpcStatus.OK;
          this.metrics.observe(method, grpcCodeName(code), seconds);
          this.log.debug({ method, ms: Math.round(seconds * 1000), code: grpcCodeName(code) }, 'CRI call');
          if (err) reject(err);
          else if (response === undefined) reject(statusError(GrpcStatus.INTERNAL, 'empty response'));
          else resolvePromise(response);
        },
      );
      const onAbort = (): void => call.cancel();
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** An Error shaped like a grpc-js ServiceError, for failures detected on this side. */
function statusError(code: number, details: string): Error & { code: number; details: string } {
  return Object.assign(new Error(details), { code, details });
}

/** The `timeout` (seconds) carried by StopContainer and ExecSync requests. */
function requestTimeoutSeconds(request: object): number | string | undefined {
  const timeout = (request as { timeout?: unknown }).timeout;
  return typeof timeout === 'number' || typeof timeout === 'string' ? timeout : undefined;
}
