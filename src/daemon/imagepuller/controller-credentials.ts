// The pull secrets of a tag as kruise-controller answers them (the default install, where the agent may read no
// secret): GET <url>/pull-credentials/v1?image=&tag= with the agent's own ServiceAccount token, over HTTPS trusting
// only the CA the controller publishes in ConfigMap kruise-daemon-config/kruise-controller-ca (read by name, again
// after a TLS failure: the CA may have been renewed). A Service URL is reached at the Service's ClusterIP from the
// pod's environment when kubelet set it (no cluster DNS needed), the certificate checked for the Service's name. A
// tag whose image has no pull secrets asks nothing. The question carries the generation of the NodeImage the tag was
// read from, so a replica whose cache has not seen that write yet waits for it rather than answer from before it. The controller answers only for tags of this agent's node and
// only with the secrets the tag's owners may use. Answers are kept DEFAULT_SECRET_CACHE_MS per tag. A refusal
// (401/403) is a PullSecretProblem with the controller's reason; the controller unreachable or not ready is an error
// the pull reports and retries with its backoff. Nothing of a token or secret is logged.
import { request as httpsRequest } from 'node:https';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../api/constants.js';
import {
  CONTROLLER_CA_CONFIGMAP,
  CONTROLLER_CA_KEY,
  PULL_CREDENTIALS_GENERATION_PARAM,
  PULL_CREDENTIALS_PATH,
  type PullCredentialsAnswer,
} from '../../api/pull-credentials.js';
import { tagOwnerKeys } from '../../api/pull-secret-use.js';
import type { KubeClient } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/object.js';
import { CoreResources } from '../../kube/resource.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import { isRecord } from '../../util/is-record.js';
import {
  DEFAULT_SECRET_CACHE_MS,
  parseSecret,
  PullSecretProblem,
  TagCredentialsBuilder,
  type PullCredentialSource,
  type PullSecretCredentials,
  type TagSecretsRequest,
} from './pull-secrets.js';

const REQUEST_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Above this many cached answers, expired ones are dropped on the next insert. */
const MAX_CACHED_ANSWERS = 256;

/** One HTTPS GET: status and body text. */
export type HttpsGet = (
  url: URL,
  options: {
    ca: string;
    headers: Record<string, string>;
    timeoutMs: number;
    /** Connect here instead of the URL's host (whose name the certificate is still checked for). */
    address?: string | undefined;
  },
) => Promise<{ status: number; body: string }>;

export interface ControllerPullCredentialsOptions {
  /** https://host:port of the controller's pull-credentials listener. */
  url: string;
  /** The agent's bearer token (its ServiceAccount's, re-read as it rotates). */
  token: () => Promise<string>;
  /** The CA PEM the controller publishes (undefined: not published yet). */
  readCa: () => Promise<string | undefined>;
  clock: Clock;
  get?: HttpsGet;
  ttlMs?: number;
  /** The environment kubelet gave the pod (the Services' `<NAME>_SERVICE_HOST`); default process.env. */
  env?: NodeJS.ProcessEnv;
}

interface CacheEntry {
  at: number;
  answer: PullCredentialsAnswer;
}

export class ControllerPullCredentials implements PullCredentialSource {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<PullCredentialsAnswer>>();
  private ca?: string | undefined;
  private readonly get: HttpsGet;
  private readonly ttlMs: number;

  constructor(private readonly o: ControllerPullCredentialsOptions) {
    this.get = o.get ?? httpsGet;
    this.ttlMs = o.ttlMs ?? DEFAULT_SECRET_CACHE_MS;
  }

  async credentials(request: TagSecretsRequest): Promise<PullSecretCredentials> {
    const builder = new TagCredentialsBuilder(tagOwnerKeys(request.ownerReferences));
    // an image without pull secrets (a public one) needs no question
    if ((request.pullSecrets ?? []).length === 0) return builder.result;
    const answer = await this.answer(request);
    for (const name of answer.missingNames ?? []) builder.missing(name);
    builder.result.unnamedMissing += answer.missing;
    for (const secret of answer.secrets) {
      builder.add(
        parseSecret({
          metadata: { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE, name: secret.name },
          ...(secret.type !== undefined && { type: secret.type }),
          data: secret.data,
        }),
      );
    }
    return builder.result;
  }

  forget(request: TagSecretsRequest): void {
    this.cache.delete(keyOf(request));
  }

  private async answer(request: TagSecretsRequest): Promise<PullCredentialsAnswer> {
    const key = keyOf(request);
    const cached = this.cache.get(key);
    if (cached && this.o.clock.now() - cached.at < this.ttlMs) return cached.answer;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.ask(request).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    const answer = await pending;
    const now = this.o.clock.now();
    if (this.cache.size >= MAX_CACHED_ANSWERS) {
      for (const [k, v] of this.cache) if (now - v.at >= this.ttlMs) this.cache.delete(k);
    }
    this.cache.set(key, { at: now, answer });
    return answer;
  }

  private async ask(request: TagSecretsRequest): Promise<PullCredentialsAnswer> {
    const url = new URL(PULL_CREDENTIALS_PATH, this.o.url);
    url.searchParams.set('image', request.imageName);
    url.searchParams.set('tag', request.tag);
    if (request.generation !== undefined)
      url.searchParams.set(PULL_CREDENTIALS_GENERATION_PARAM, String(request.generation));
    const where = `kruise-controller (${this.o.url})`;
    this.ca ??= await this.o.readCa().catch((err: unknown) => {
      throw new Error(
        `the CA of ${where} cannot be read from ConfigMap ` +
          `${KRUISE_DAEMON_CONFIG_NAMESPACE}/${CONTROLLER_CA_CONFIGMAP}: ${errorMessage(err)}`,
      );
    });
    if (this.ca === undefined) {
      throw new Error(
        `${where} has not published its CA in ConfigMap ${KRUISE_DAEMON_CONFIG_NAMESPACE}/${CONTROLLER_CA_CONFIGMAP} yet`,
      );
    }
    let reply: { status: number; body: string };
    try {
      reply = await this.get(url, {
        ca: this.ca,
        headers: { authorization: `Bearer ${await this.o.token()}`, accept: 'application/json' },
        timeoutMs: REQUEST_TIMEOUT_MS,
        address: serviceAddress(url, this.o.env ?? process.env),
      });
    } catch (err) {
      this.ca = undefined; // a renewed CA, or the controller not there yet: read the CA again next time
      throw new Error(`pull credentials from ${where} could not be read: ${errorMessage(err)}`);
    }
    const body = parseJson(reply.body);
    const message = isRecord(body) && typeof body.message === 'string' ? body.message : reply.body.slice(0, 200);
    if (reply.status === 401 || reply.status === 403 || reply.status === 400) {
      throw new PullSecretProblem(`${where} refused the pull credentials (${reply.status}): ${message}`);
    }
    if (reply.status !== 200) {
      throw new Error(`pull credentials from ${where} could not be read (${reply.status}): ${message}`);
    }
    if (!isAnswer(body)) throw new Error(`pull credentials from ${where}: the answer is not understood`);
    return body;
  }
}

/**
 * A cached answer is for this tag as the spec has it now: its image's secrets and its owners (a job joining the tag,
 * or a secret copied in, asks again rather than reuse an answer given without it).
 */
function keyOf(request: TagSecretsRequest): string {
  return JSON.stringify([
    request.imageName,
    request.tag,
    (request.pullSecrets ?? []).map((r) => r.name ?? ''),
    tagOwnerKeys(request.ownerReferences) ?? null,
  ]);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isAnswer(body: unknown): body is PullCredentialsAnswer {
  return (
    isRecord(body) &&
    typeof body.missing === 'number' &&
    Array.isArray(body.secrets) &&
    body.secrets.every((s) => isRecord(s) && typeof s.name === 'string' && isRecord(s.data)) &&
    (body.missingNames === undefined ||
      (Array.isArray(body.missingNames) && body.missingNames.every((n) => typeof n === 'string')))
  );
}

/** The CA the controller published, read by name (undefined when the ConfigMap or its key is not there yet). */
export function controllerCaReader(client: KubeClient): () => Promise<string | undefined> {
  return async () => {
    try {
      const cm = await client.get<KubeObject & { data?: Record<string, string> }>(
        CoreResources.configMaps,
        CONTROLLER_CA_CONFIGMAP,
        { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE },
      );
      const ca = cm.data?.[CONTROLLER_CA_KEY];
      return ca && ca.includes('BEGIN CERTIFICATE') ? ca : undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
}

/**
 * The ClusterIP of a `<service>.<namespace>.svc[.cluster.local]` URL from the variable kubelet sets in every pod for
 * each Service of its namespace (`KRUISE_CONTROLLER_CREDENTIALS_SERVICE_HOST`), so the agent needs no cluster DNS (a
 * host-network pod may have none); undefined when it is not set (then the name is resolved as usual).
 */
export function serviceAddress(url: URL, env: NodeJS.ProcessEnv): string | undefined {
  const match = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.[a-z0-9-]+\.svc(\.cluster\.local)?$/.exec(url.hostname);
  if (!match) return undefined;
  const value = env[`${match[1]!.toUpperCase().replace(/-/g, '_')}_SERVICE_HOST`]?.trim();
  return value ? value : undefined;
}

const httpsGet: HttpsGet = (url, options) =>
  new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method: 'GET',
        ca: options.ca,
        headers: options.headers,
        timeout: options.timeoutMs,
        ...(options.address !== undefined && {
          host: options.address,
          hostname: options.address,
          servername: url.hostname,
        }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error('the answer is too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
