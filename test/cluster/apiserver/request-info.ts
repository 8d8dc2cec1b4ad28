// Parses a request path and query into what the API emulator serves: discovery, or a verb on a resource.
import { apiErrors } from './errors.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequest {
  kind: 'resource';
  group: string;
  version: string;
  /** Namespace from the path ('' when none). */
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  verb: Verb;
}

export interface OtherRequest {
  kind: 'other';
  path: string;
}

export type RequestInfo = ResourceRequest | OtherRequest;

/** Subresources of a namespace itself (/api/v1/namespaces/NAME/status). */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Go's strconv.ParseBool, which kube-apiserver uses for query flags (python sends `watch=True`). */
export function parseBool(value: string | null, name: string): boolean {
  if (value === null || value === '') return false;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw apiErrors.badRequest(`invalid boolean value for ${name}: ${JSON.stringify(value)}`);
}

function verbFor(method: string, hasName: boolean, watch: boolean): Verb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}

/** Classify a request; throws 405 for an unknown method on a resource path. */
export function parseRequestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo {
  const parts = pathname.split('/').filter((p) => p !== '');
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return { kind: 'other', path: pathname };
  }
  let watch = parseBool(query.get('watch'), 'watch');
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) return { kind: 'other', path: pathname };
  const [resource, name = '', subresource = ''] = rest.map((p) => decodeURIComponent(p)) as [string, ...string[]];
  const verb = verbFor(method, name !== '', watch);
  if (!verb) throw apiErrors.methodNotAllowed();
  return { kind: 'resource', group, version, namespace, resource, name, subresource, verb };
}
