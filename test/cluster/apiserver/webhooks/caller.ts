// The emulator's webhook caller, an admission plugin: mutating webhooks in order (configurations by name, webhooks
// in their order), each seeing the object as the previous one left it, JSON-patch responses applied; then the
// validating webhooks, all called at once. AdmissionReview v1 over HTTPS verified against the caBundle, with the
// webhook's timeoutSeconds; a call that fails follows failurePolicy (Fail → 500 InternalError, Ignore → skipped);
// a denial answers with the webhook's code (403 default) and "admission webhook "<name>" denied the request: ...".
// Service references are not routable here (no cluster network): use clientConfig.url.
import { randomUUID } from 'node:crypto';
import { Agent, request as httpsRequest } from 'node:https';
import { admissionDenied, type AdmissionPlugin, type AdmissionRequest } from '../admission.js';
import type { ApiContext } from '../context.js';
import { ApiError } from '../errors.js';
import { applyJsonPatch, type JsonValue } from '../patch/index.js';
import type { KubeObject } from '../types.js';
import { webhookMatches, type RegisteredWebhook } from './matching.js';

const MUTATING = 'mutatingwebhookconfigurations';
const VALIDATING = 'validatingwebhookconfigurations';
const GROUP = 'admissionregistration.k8s.io';

interface ReviewResponse {
  uid?: string;
  allowed?: boolean;
  status?: { code?: number; message?: string; reason?: string };
  patchType?: string;
  patch?: string;
}

export interface WebhookCallRecord {
  webhook: string;
  operation: string;
  resource: string;
  outcome: 'allowed' | 'denied' | 'error' | 'ignored';
}

export class WebhookCaller implements AdmissionPlugin {
  readonly name = 'webhooks';
  /** The last calls made (newest last, at most 200), for tests. */
  readonly calls: WebhookCallRecord[] = [];

  constructor(private readonly ctx: ApiContext) {}

  /** Are any webhook configurations stored? (The plugin is only in the chain while there are.) */
  hasConfigurations(): boolean {
    return this.configs(MUTATING).length + this.configs(VALIDATING).length > 0;
  }

  async mutate(request: AdmissionRequest): Promise<KubeObject | undefined> {
    if (skipped(request)) return undefined;
    let object = request.object;
    let changed = false;
    for (const hook of this.hooks(MUTATING)) {
      const current = { ...request, object };
      if (!webhookMatches(hook, current, (ns) => this.namespace(ns))) continue;
      const response = await this.call(hook, current);
      if (!response) continue;
      if (response.patch && object) {
        if (response.patchType !== 'JSONPatch') {
          throw this.failure(hook, `unsupported patchType ${String(response.patchType)}`);
        }
        try {
          const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonValue;
          object = applyJsonPatch(object as unknown as JsonValue, ops) as unknown as KubeObject;
          changed = true;
        } catch (err) {
          throw this.failure(hook, `the webhook's JSON patch does not apply: ${(err as Error).message}`);
        }
      }
    }
    return changed ? object : undefined;
  }

  async validate(request: AdmissionRequest): Promise<void> {
    if (skipped(request)) return;
    const hooks = this.hooks(VALIDATING).filter((h) => webhookMatches(h, request, (ns) => this.namespace(ns)));
    const results = await Promise.allSettled(hooks.map((h) => this.call(h, request)));
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }

  private configs(plural: string): KubeObject[] {
    const rt = this.ctx.registry.lookup(GROUP, 'v1', plural);
    if (!rt) return [];
    return [...this.ctx.store.list(rt.storageKey)];
  }

  private hooks(plural: string): RegisteredWebhook[] {
    const configs = this.configs(plural).sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    return configs.flatMap((c) =>
      ((c as { webhooks?: RegisteredWebhook[] }).webhooks ?? []).filter((h) => h && h.name),
    );
  }

  private namespace(name: string): KubeObject | undefined {
    const rt = this.ctx.registry.lookup('', 'v1', 'namespaces');
    return rt ? this.ctx.store.get(rt.storageKey, '', name) : undefined;
  }

  private record(hook: RegisteredWebhook, request: AdmissionRequest, outcome: WebhookCallRecord['outcome']): void {
    this.calls.push({ webhook: hook.name, operation: request.operation, resource: request.resource.resource, outcome });
    if (this.calls.length > 200) this.calls.shift();
  }

  /** Call one webhook; undefined when it failed and failurePolicy is Ignore; throws a denial or a failure. */
  private async call(hook: RegisteredWebhook, request: AdmissionRequest): Promise<ReviewResponse | undefined> {
    const uid = randomUUID();
    let response: ReviewResponse;
    try {
      const review = reviewOf(uid, request);
      response = await post(hook, review).catch((err: unknown) => {
        // A kept-alive connection the server closed meanwhile (a restart): one fresh try, as Go's transport does.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ECONNRESET' || code === 'EPIPE') return post(hook, review);
        throw err;
      });
      if (response.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${String(response.uid)}"`);
      if (typeof response.allowed !== 'boolean') throw new Error('the response has no "allowed"');
    } catch (err) {
      if (hook.failurePolicy === 'Ignore') {
        this.ctx.logger.warn(
          { webhook: hook.name, err: (err as Error).message },
          'webhook failed; ignored (failurePolicy Ignore)',
        );
        this.record(hook, request, 'ignored');
        return undefined;
      }
      this.record(hook, request, 'error');
      throw this.failure(hook, (err as Error).message);
    }
    if (!response.allowed) {
      this.record(hook, request, 'denied');
      const code = response.status?.code && response.status.code >= 400 ? response.status.code : 403;
      const message = response.status?.message || 'without explanation';
      throw admissionDenied(request, hook.name, message, code);
    }
    this.record(hook, request, 'allowed');
    return response;
  }

  private failure(hook: RegisteredWebhook, message: string): ApiError {
    const target =
      hook.clientConfig?.url ?? `service ${hook.clientConfig?.service?.namespace}/${hook.clientConfig?.service?.name}`;
    return new ApiError(
      500,
      'InternalError',
      `Internal error occurred: failed calling webhook "${hook.name}": failed to call webhook: Post "${target}": ${message}`,
    );
  }
}

/** kube-apiserver does not call webhooks for the webhook configurations themselves. */
function skipped(request: AdmissionRequest): boolean {
  return (
    request.resource.group === GROUP &&
    (request.resource.resource === MUTATING || request.resource.resource === VALIDATING)
  );
}

function reviewOf(uid: string, request: AdmissionRequest): unknown {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: request.kind,
      resource: request.resource,
      subResource: request.subResource || undefined,
      requestKind: request.kind,
      requestResource: request.resource,
      name: request.name,
      namespace: request.namespace || undefined,
      operation: request.operation,
      userInfo: { username: request.userAgent ? `emulator:${request.userAgent.split(' ')[0]}` : 'emulator' },
      object: request.object ?? null,
      oldObject: request.oldObject ?? null,
      dryRun: request.dryRun,
      options: null,
    },
  };
}

/** Kept-alive TLS connections per caBundle, as kube-apiserver keeps them (a handshake per call is costly). */
const agents = new Map<string, Agent>();

function agentFor(ca: string | undefined): Agent {
  const key = ca ?? '';
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 32, ca, timeout: 30_000 });
    if (agents.size > 16) {
      for (const old of agents.values()) old.destroy();
      agents.clear();
    }
    agents.set(key, agent);
  }
  return agent;
}

function post(hook: RegisteredWebhook, review: unknown): Promise<ReviewResponse> {
  const url = hook.clientConfig?.url;
  if (!url) {
    return Promise.reject(new Error('service references are not routable in the API emulator; use clientConfig.url'));
  }
  const body = JSON.stringify(review);
  const timeoutMs = Math.min(Math.max(hook.timeoutSeconds ?? 10, 1), 30) * 1000;
  const ca = hook.clientConfig?.caBundle
    ? Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8')
    : undefined;
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new Error(`invalid URL ${url}`));
      return;
    }
    if (target.protocol !== 'https:') {
      reject(new Error('webhook URLs must be https'));
      return;
    }
    const req = httpsRequest(
      target,
      {
        method: 'POST',
        agent: agentFor(ca),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
            reject(new Error(`the server responded with HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
            return;
          }
          try {
            const parsed = JSON.parse(text) as { response?: ReviewResponse };
            if (!parsed.response) throw new Error('no response in the AdmissionReview');
            resolve(parsed.response);
          } catch (err) {
            reject(new Error(`bad AdmissionReview: ${(err as Error).message}`));
          }
        });
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`context deadline exceeded (timeout ${timeoutMs / 1000}s)`)),
      timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error(`context deadline exceeded (timeout ${timeoutMs / 1000}s)`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Put the caller into the admission chain while webhook configurations are stored, and out of it when the last
 * one goes, so an emulator without webhooks behaves exactly as before. Returns the caller.
 */
export function installWebhookCaller(ctx: ApiContext): WebhookCaller {
  const caller = new WebhookCaller(ctx);
  let remove: (() => void) | undefined;
  const sync = (): void => {
    const want = caller.hasConfigurations();
    if (want && !remove) remove = ctx.admission.add(caller);
    else if (!want && remove) {
      remove();
      remove = undefined;
    }
  };
  ctx.store.subscribe((event) => {
    if (event.storageKey.includes(MUTATING) || event.storageKey.includes(VALIDATING)) sync();
  });
  sync();
  return caller;
}
