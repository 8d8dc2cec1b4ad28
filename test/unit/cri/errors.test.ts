import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import {
  CriAuthenticationFailedError,
  CriDeadlineExceededError,
  CriError,
  CriImageNotFoundError,
  CriInvalidArgumentError,
  CriNotFoundError,
  CriRegistryUnreachableError,
  CriUnavailableError,
  CriUnimplementedError,
  grpcCodeName,
  isCriError,
  toCriError,
} from '../../../src/cri/errors.js';

// What containerd 1.6.20 answered on this machine (container-runtime.md and our own probes).
const CONTAINERD_401 =
  'failed to pull and unpack image "127.0.0.1:5001/test/busybox:1.0": failed to resolve reference ' +
  '"127.0.0.1:5001/test/busybox:1.0": pulling from host 127.0.0.1:5001 failed with status code [manifests 1.0]: 401 Unauthorized';
const CONTAINERD_MISSING_TAG =
  'failed to pull and unpack image "127.0.0.1:5000/test/busybox:9.9": failed to resolve reference ' +
  '"127.0.0.1:5000/test/busybox:9.9": 127.0.0.1:5000/test/busybox:9.9: not found';
const CONTAINERD_REFUSED =
  'failed to pull and unpack image "127.0.0.1:5999/x:1": failed to resolve reference "127.0.0.1:5999/x:1": failed to do ' +
  'request: Head "http://127.0.0.1:5999/v2/x/manifests/1": dial tcp 127.0.0.1:5999: connect: connection refused';

function grpcError(code: number, details: string): Error & { code: number; details: string } {
  return Object.assign(new Error(`${code} ${grpcCodeName(code)}: ${details}`), { code, details });
}

describe('cri errors: toCriError', () => {
  it('maps a 401 on pull to AuthenticationFailed naming the registry, keeping the runtime message', () => {
    const err = toCriError(grpcError(status.UNKNOWN, CONTAINERD_401), {
      method: 'PullImage',
      image: '127.0.0.1:5001/test/busybox:1.0',
      withCredentials: true,
    });
    assert.ok(err instanceof CriAuthenticationFailedError);
    assert.equal(err.kind, 'AuthenticationFailed');
    assert.equal(err.registry, '127.0.0.1:5001');
    assert.equal(err.image, '127.0.0.1:5001/test/busybox:1.0');
    assert.equal(err.runtimeMessage, CONTAINERD_401);
    assert.match(err.message, /registry 127\.0\.0\.1:5001 rejected the given credentials/);
    assert.ok(err.message.endsWith(CONTAINERD_401));
  });

  it('says when no credentials were given, and recognises 403 / unauthorized / denied wordings', () => {
    const noCreds = toCriError(grpcError(status.UNKNOWN, CONTAINERD_401), { method: 'PullImage', image: 'r.io/a:1' });
    assert.match(noCreds.message, /registry r\.io requires credentials and none were given/);
    for (const said of [
      'unexpected status: 403 Forbidden',
      'pull access denied, repository does not exist or may require authorization: server message: insufficient_scope',
      'failed to authorize: failed to fetch anonymous token: unauthorized',
      'reading manifest 1 in docker.io/library/x: requested access to the resource is denied: denied: requested access to the resource is denied',
    ]) {
      const err = toCriError(grpcError(status.UNKNOWN, said), { method: 'PullImage', image: 'x:1' });
      assert.equal(err.kind, 'AuthenticationFailed', said);
      assert.equal((err as CriAuthenticationFailedError).registry, 'docker.io');
    }
  });

  it('maps a missing tag or repository on pull to ImageNotFound (containerd NOT_FOUND, CRI-O manifest unknown)', () => {
    const a = toCriError(grpcError(status.NOT_FOUND, CONTAINERD_MISSING_TAG), {
      method: 'PullImage',
      image: '127.0.0.1:5000/test/busybox:9.9',
    });
    assert.ok(a instanceof CriImageNotFoundError);
    assert.equal(a.registry, '127.0.0.1:5000');
    assert.ok(a.message.includes(CONTAINERD_MISSING_TAG));
    const b = toCriError(grpcError(status.UNKNOWN, 'reading manifest 9 in quay.io/a/b: manifest unknown'), {
      method: 'PullImage',
      image: 'quay.io/a/b:9',
    });
    assert.equal(b.kind, 'ImageNotFound');
  });

  it('maps registry connection failures on pull to RegistryUnreachable, and bad references to InvalidArgument', () => {
    const err = toCriError(grpcError(status.UNKNOWN, CONTAINERD_REFUSED), {
      method: 'PullImage',
      image: '127.0.0.1:5999/x:1',
    });
    assert.ok(err instanceof CriRegistryUnreachableError);
    assert.equal(err.registry, '127.0.0.1:5999');
    const bad = toCriError(
      grpcError(status.UNKNOWN, 'failed to parse image reference "not a ref!!": invalid reference format'),
      { method: 'PullImage', image: 'not a ref!!' },
    );
    assert.ok(bad instanceof CriInvalidArgumentError);
  });

  it('never reads registry meaning into transport failures or into other methods', () => {
    const unavailable = toCriError(grpcError(status.UNAVAILABLE, 'No connection established. Last error: 401'), {
      method: 'PullImage',
      image: 'r.io/a:1',
      socket: '/run/containerd/containerd.sock',
    });
    assert.ok(unavailable instanceof CriUnavailableError);
    assert.match(unavailable.message, /runtime at \/run\/containerd\/containerd\.sock unavailable/);
    const notFound = toCriError(
      grpcError(status.NOT_FOUND, 'an error occurred when try to find container "abc": not found'),
      {
        method: 'ContainerStatus',
      },
    );
    assert.ok(notFound instanceof CriNotFoundError);
    assert.equal(notFound.kind, 'NotFound');
  });

  it('maps gRPC codes to kinds', () => {
    const cases: [number, string, (new (...a: never[]) => CriError) | undefined][] = [
      [status.DEADLINE_EXCEEDED, 'DeadlineExceeded', CriDeadlineExceededError],
      [status.INVALID_ARGUMENT, 'InvalidArgument', CriInvalidArgumentError],
      [status.UNIMPLEMENTED, 'Unimplemented', CriUnimplementedError],
      [status.CANCELLED, 'Cancelled', undefined],
      [status.ALREADY_EXISTS, 'AlreadyExists', undefined],
      [status.FAILED_PRECONDITION, 'FailedPrecondition', undefined],
      [status.RESOURCE_EXHAUSTED, 'ResourceExhausted', undefined],
      [status.PERMISSION_DENIED, 'PermissionDenied', undefined],
      [status.INTERNAL, 'Internal', undefined],
      [status.UNKNOWN, 'Unknown', undefined],
    ];
    for (const [code, kind, cls] of cases) {
      const err = toCriError(grpcError(code, 'runtime words'), { method: 'StartContainer', deadlineMs: 1500 });
      assert.equal(err.kind, kind);
      assert.equal(err.grpcCode, code);
      assert.equal(err.method, 'StartContainer');
      assert.equal(err.runtimeMessage, 'runtime words');
      if (cls) assert.ok(err instanceof cls, kind);
      assert.ok(isCriError(err, err.kind));
    }
    const late = toCriError(grpcError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'), {
      method: 'Version',
      deadlineMs: 1500,
    });
    assert.match(late.message, /^CRI Version: no answer within the deadline of 1500 ms/);
  });

  it('wraps non-gRPC failures and passes CriErrors through unchanged', () => {
    const plain = toCriError(new Error('boom'), { method: 'Version' });
    assert.equal(plain.kind, 'Unknown');
    assert.equal(plain.runtimeMessage, 'boom');
    assert.equal(toCriError(plain, { method: 'Other' }), plain);
    assert.equal(toCriError('a string', { method: 'Version' }).runtimeMessage, 'a string');
    assert.equal(grpcCodeName(status.UNAVAILABLE), 'UNAVAILABLE');
    assert.equal(grpcCodeName(99), 'CODE_99');
  });
});
