// The pull-credentials listener of kruise-controller (its own port, not the admission webhooks'): HTTPS with the
// controller's serving certificate (swapped on rotation), one path, GET only. Each request: the agent's token checked
// (AgentIdentities: TokenReview, cached), then the answer built from the caches (answer.ts). 401/403 with a message
// saying why; 503 while the caches have not synced, the TokenReview failed, or the NodeImage cache is older than the
// generation the agent read (the agent retries its pull). An answer a cache catching up could change (a refusal, a
// cache behind the agent, a named secret not seen) waits up to 2 s for it before it is given.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { PULL_CREDENTIALS_GENERATION_PARAM, PULL_CREDENTIALS_PATH } from '../../api/pull-credentials.js';
import { errorMessage } from '../../util/error-message.js';
import type { AgentIdentities } from './agent-identity.js';
import { answerFor, cacheMayCatchUp, type CredentialsLookup, type CredentialsQuestion } from './answer.js';
import { closeNow, listenOn } from '../../util/server-listen.js';

/** How long an answer waits for the caches to catch up with what the agent saw (a tag or secret just written). */
export const CACHE_GRACE_MS = 2000;
export const CACHE_GRACE_STEP_MS = 100;

export interface PullCredentialsServerOptions {
  certPem: string;
  keyPem: string;
  identities: Pick<AgentIdentities, 'identify'>;
  lookup: CredentialsLookup;
  /** Why answers cannot be given yet (caches not synced), or undefined. */
  notReady: () => string | undefined;
  logger: Logger;
  /** Waits between looks at the caches while an answer may still change (default: a timer; tests pass their own). */
  pause?: (ms: number) => Promise<void>;
}

export class PullCredentialsServer {
  private readonly server: Server;

  constructor(private readonly o: PullCredentialsServerOptions) {
    this.server = createServer({ cert: o.certPem, key: o.keyPem, minVersion: 'TLSv1.2' }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        o.logger.error({ err: errorMessage(err) }, 'pull-credentials request failed');
        if (!res.headersSent) reply(res, 500, { message: 'internal error' });
        else res.destroy();
      });
    });
    this.server.headersTimeout = 10_000;
    this.server.requestTimeout = 30_000;
  }

  setCertificate(certPem: string, keyPem: string): void {
    this.server.setSecureContext({ cert: certPem, key: keyPem });
  }

  async listen(host: string, port: number): Promise<number> {
    const bound = await listenOn(this.server, host, port, (err) =>
      this.o.logger.error({ err }, 'pull-credentials server error'),
    );
    return bound.port;
  }

  close(): Promise<void> {
    return closeNow(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://controller.invalid');
    if (url.pathname !== PULL_CREDENTIALS_PATH) {
      reply(res, 404, { message: `nothing at ${url.pathname}; the pull credentials are at ${PULL_CREDENTIALS_PATH}` });
      return;
    }
    if (req.method !== 'GET') {
      reply(res, 405, { message: `${PULL_CREDENTIALS_PATH} takes GET` });
      return;
    }
    let identity;
    try {
      identity = await this.o.identities.identify(req.headers.authorization);
    } catch (err) {
      reply(res, 503, { message: `the token could not be reviewed: ${errorMessage(err)}` });
      return;
    }
    if (!identity.ok) {
      this.o.logger.info({ status: identity.status, reason: identity.message }, 'pull-credentials request refused');
      reply(res, identity.status, { message: identity.message });
      return;
    }
    const notReady = this.o.notReady();
    if (notReady !== undefined) {
      reply(res, 503, { message: `not ready: ${notReady}` });
      return;
    }
    const image = url.searchParams.get('image') ?? '';
    const tag = url.searchParams.get('tag') ?? '';
    const generationText = url.searchParams.get(PULL_CREDENTIALS_GENERATION_PARAM);
    const generation = generationText === null ? undefined : Number(generationText);
    if (generation !== undefined && (!Number.isSafeInteger(generation) || generation < 0)) {
      reply(res, 400, {
        message: `${PULL_CREDENTIALS_GENERATION_PARAM} must be a whole number, not ${generationText}`,
      });
      return;
    }
    const question: CredentialsQuestion = { image, tag, generation };
    let answer = answerFor(identity.node, question, this.o.lookup);
    // The agent may have seen a write (a tag, an owner, a secret) before this replica's caches did: give them a moment.
    for (let waited = 0; cacheMayCatchUp(answer) && waited < CACHE_GRACE_MS; waited += CACHE_GRACE_STEP_MS) {
      await (this.o.pause ?? pauseFor)(CACHE_GRACE_STEP_MS);
      answer = answerFor(identity.node, question, this.o.lookup);
    }
    if (answer.status !== 200) {
      this.o.logger.info(
        { node: identity.node, pod: identity.pod, image, tag, reason: answer.body.message },
        'pull-credentials request refused',
      );
    }
    reply(res, answer.status, answer.body);
  }
}

function pauseFor(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
}
