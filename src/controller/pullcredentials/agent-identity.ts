// Who is asking: an agent's bearer token checked by the API server (TokenReview), accepted only when it is the
// agent's ServiceAccount, bound to a pod (user extra authentication.kubernetes.io/pod-name: a token bound to a Node
// object or to nothing does not pass) and that pod's node is named (authentication.kubernetes.io/node-name, set by
// the API server from the pod's spec.nodeName when it issued the token). Answers are cached by the token's SHA-256,
// so a node's pulls cost one TokenReview per token: an accepted token until its expiry but at most
// ACCEPTED_CACHE_MS (a bound token dies with its pod; the API server's own token cache keeps answers about as long),
// a refused one for REFUSED_CACHE_MS. The cache is bounded; nothing of a token is logged.
import { createHash } from 'node:crypto';
import type { KubeClient } from '../../kube/client.js';
import type { ResourceType } from '../../kube/resource.js';
import type { KubeObject } from '../../kube/object.js';
import type { Clock } from '../../util/clock.js';
import { isRecord } from '../../util/is-record.js';

export const TOKEN_REVIEWS: ResourceType = {
  group: 'authentication.k8s.io',
  version: 'v1',
  resource: 'tokenreviews',
  namespaced: false,
  kind: 'TokenReview',
};

export const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';
export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
export const ACCEPTED_CACHE_MS = 5 * 60_000;
export const REFUSED_CACHE_MS = 10_000;
export const MAX_CACHED_TOKENS = 20_000;

export type AgentIdentity = { ok: true; node: string; pod: string } | { ok: false; status: 401 | 403; message: string };

interface TokenReviewObject extends KubeObject {
  spec: { token: string };
  status?: {
    authenticated?: boolean;
    error?: string;
    user?: { username?: string; extra?: Record<string, string[]> };
  };
}

export interface AgentIdentityOptions {
  client: Pick<KubeClient, 'create'>;
  clock: Clock;
  /** The agent's ServiceAccount as `namespace/name`. */
  serviceAccount: string;
}

interface Cached {
  identity: AgentIdentity;
  until: number;
}

export class AgentIdentities {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<AgentIdentity>>();
  private readonly username: string;
  /** TokenReviews sent (a metric and the tests' count). */
  reviews = 0;

  constructor(private readonly o: AgentIdentityOptions) {
    const [namespace, name] = o.serviceAccount.split('/');
    this.username = `system:serviceaccount:${namespace ?? ''}:${name ?? ''}`;
  }

  /** The identity behind an `Authorization` header value; API failures are thrown (the caller answers 503). */
  async identify(authorization: string | undefined): Promise<AgentIdentity> {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!match)
      return { ok: false, status: 401, message: "a bearer token (the agent pod's ServiceAccount token) is required" };
    const token = match[1]!;
    const key = createHash('sha256').update(token).digest('hex');
    const now = this.o.clock.now();
    const cached = this.cache.get(key);
    if (cached && now < cached.until) return cached.identity;
    if (cached) this.cache.delete(key);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.review(token, key).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return await pending;
  }

  private async review(token: string, key: string): Promise<AgentIdentity> {
    this.reviews++;
    const review = await this.o.client.create<TokenReviewObject>(TOKEN_REVIEWS, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      metadata: {},
      spec: { token },
    });
    const identity = this.judge(review.status);
    const now = this.o.clock.now();
    const until = identity.ok ? Math.min(now + ACCEPTED_CACHE_MS, expiryOf(token) ?? Infinity) : now + REFUSED_CACHE_MS;
    if (this.cache.size >= MAX_CACHED_TOKENS) this.evict(now);
    this.cache.set(key, { identity, until });
    return identity;
  }

  private judge(status: TokenReviewObject['status']): AgentIdentity {
    if (!status?.authenticated) {
      return { ok: false, status: 401, message: 'the token was not accepted by the API server' };
    }
    const user = status.user ?? {};
    if (user.username !== this.username) {
      return { ok: false, status: 403, message: `only the agent's ServiceAccount (${this.o.serviceAccount}) may ask` };
    }
    const pod = firstExtra(user.extra, POD_NAME_EXTRA);
    const node = firstExtra(user.extra, NODE_NAME_EXTRA);
    if (pod === undefined || node === undefined) {
      return {
        ok: false,
        status: 403,
        message: 'the token is not bound to a pod on a node (a token bound to a Node object or to nothing is refused)',
      };
    }
    return { ok: true, node, pod };
  }

  private evict(now: number): void {
    for (const [k, v] of this.cache) if (v.until <= now) this.cache.delete(k);
    // still full: drop the oldest entries (a Map iterates in insertion order)
    for (const k of this.cache.keys()) {
      if (this.cache.size < MAX_CACHED_TOKENS) break;
      this.cache.delete(k);
    }
  }
}

function firstExtra(extra: Record<string, string[]> | undefined, key: string): string | undefined {
  const values = extra?.[key];
  const first = Array.isArray(values) ? values[0] : undefined;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

/** The `exp` claim of a JWT in ms (read only for the cache's lifetime, after the API server accepted the token). */
export function expiryOf(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return isRecord(claims) && typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
