// Pull secrets for the agent: read only from namespace kruise-daemon-config (the agent's RBAC allows nothing
// else), by GET, each kept for a short while so a burst of pulls costs one request per secret. A secret that does
// not exist is skipped and named (a NodeImage may still name a copy the controller deleted; OpenKruise skips it
// too). Nothing of a secret's content is ever logged or put into a message.
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../api/constants.js';
import type { ReferenceObject } from '../../api/nodeimage.js';
import type { Clock } from '../../util/clock.js';
import { credentialsOfSecret, type PullSecretObject, type RegistryCredential } from './docker-keyring.js';
import { errorMessage } from '../../util/error-message.js';

/** Reads one secret of kruise-daemon-config; resolves undefined when it does not exist. */
export type SecretReader = (name: string) => Promise<PullSecretObject | undefined>;

export const DEFAULT_SECRET_CACHE_MS = 60_000;

interface CacheEntry {
  at: number;
  credentials?: RegistryCredential[];
  /** The secret does not exist; cached like a good answer. */
  missing?: boolean;
  /** Why the secret cannot be used (malformed); cached like a good answer. */
  problem?: string;
}

export interface PullSecretCredentials {
  credentials: RegistryCredential[];
  /** Names of referenced secrets that do not exist in kruise-daemon-config (skipped). */
  missing: string[];
}

export class PullSecretProblem extends Error {
  override readonly name = 'PullSecretProblem';
}

export class PullSecretStore {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();

  constructor(
    private readonly read: SecretReader,
    private readonly clock: Clock,
    private readonly ttlMs = DEFAULT_SECRET_CACHE_MS,
  ) {}

  /**
   * The credentials of every referenced secret that exists, in order, and the names of those that do not. Throws
   * PullSecretProblem naming the first secret that is outside kruise-daemon-config or malformed. API failures
   * other than not-found are thrown as is.
   */
  async credentials(refs: readonly ReferenceObject[] | undefined): Promise<PullSecretCredentials> {
    const out: PullSecretCredentials = { credentials: [], missing: [] };
    for (const ref of refs ?? []) {
      const namespace = ref.namespace || KRUISE_DAEMON_CONFIG_NAMESPACE;
      const name = ref.name ?? '';
      if (name === '') throw new PullSecretProblem('a pull secret reference has no name');
      if (namespace !== KRUISE_DAEMON_CONFIG_NAMESPACE) {
        throw new PullSecretProblem(
          `pull secret ${namespace}/${name} is not in namespace ${KRUISE_DAEMON_CONFIG_NAMESPACE}; ` +
            'the agent reads pull secrets only from there',
        );
      }
      const entry = await this.entry(name);
      if (entry.problem !== undefined) throw new PullSecretProblem(entry.problem);
      if (entry.missing) out.missing.push(name);
      else out.credentials.push(...(entry.credentials ?? []));
    }
    return out;
  }

  /** Drop cached copies (a pull failed with the credentials: maybe the secret was updated). */
  forget(refs: readonly ReferenceObject[] | undefined): void {
    for (const ref of refs ?? []) if (ref.name) this.cache.delete(ref.name);
  }

  /** Drop cached answers for these secret names (a pull failed without them: they may have been copied in since). */
  forgetNames(names: readonly string[]): void {
    for (const name of names) this.cache.delete(name);
  }

  private async entry(name: string): Promise<CacheEntry> {
    const cached = this.cache.get(name);
    if (cached && this.clock.now() - cached.at < this.ttlMs) return cached;
    let pending = this.inFlight.get(name);
    if (!pending) {
      pending = this.load(name).finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, pending);
    }
    return await pending;
  }

  private async load(name: string): Promise<CacheEntry> {
    const secret = await this.read(name);
    const at = this.clock.now();
    let entry: CacheEntry;
    if (!secret) {
      entry = { at, missing: true };
    } else {
      try {
        entry = { at, credentials: credentialsOfSecret(secret) };
      } catch (err) {
        entry = { at, problem: errorMessage(err) };
      }
    }
    this.cache.set(name, entry);
    return entry;
  }
}

/** How a skipped (missing) secret is named in a tag's status message and in events. */
export function skippedSecretsMessage(names: readonly string[]): string {
  return names.map((name) => `pull secret ${KRUISE_DAEMON_CONFIG_NAMESPACE}/${name} not found, skipped`).join('; ');
}
