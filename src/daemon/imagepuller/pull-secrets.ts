// Pull secrets for one tag, from either of two sources (PullCredentialSource):
// - PullSecretStore (below) reads copies in namespace kruise-daemon-config itself, by GET, each kept for a short
//   while so a burst of pulls costs one request per secret; it needs the RBAC to read every copy there, so it is the
//   agent-only install's (beside OpenKruise's manager, which has no credentials endpoint).
// - ControllerPullCredentials (controller-credentials.ts) asks kruise-controller, which answers only for tags of the
//   agent's own node (the default install: the agent may read no secret).
// Either way a tag uses only the secrets of its own owners (src/api/pull-secret-use.ts). A secret that does not
// exist is skipped (a NodeImage may still name a copy the controller deleted; OpenKruise skips it too): named when
// the tag has no owners (a NodeImage written by hand), only counted otherwise, since a copy's name is its source's
// and may be another tenant's. A malformed secret fails the pull when the tag's owners are one tenant (it is theirs,
// named), and is skipped and counted when they are several, so one tenant's bad secret never fails another's pull.
// Nothing of a secret's content is ever logged or put into a message.
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../api/constants.js';
import type { ObjectReference } from '../../api/meta.js';
import type { ReferenceObject } from '../../api/nodeimage.js';
import { ownerNamespaces, secretReferences, tagMayUseSecret, tagOwnerKeys } from '../../api/pull-secret-use.js';
import type { Clock } from '../../util/clock.js';
import { credentialsOfSecret, type PullSecretObject, type RegistryCredential } from './docker-keyring.js';
import { errorMessage } from '../../util/error-message.js';

/** Reads one secret of kruise-daemon-config; resolves undefined when it does not exist. */
export type SecretReader = (name: string) => Promise<PullSecretObject | undefined>;

export const DEFAULT_SECRET_CACHE_MS = 60_000;

/** What a source needs to know of a tag (TagPullSpec has it). */
export interface TagSecretsRequest {
  /** The NodeImage key of the image (familiar name, no tag). */
  imageName: string;
  tag: string;
  /** The image's pullSecrets (a union over every owner of every tag of the image). */
  pullSecrets?: readonly ReferenceObject[] | undefined;
  /** The tag's owners (ImagePullJobs); none: a tag written by hand. */
  ownerReferences?: readonly ObjectReference[] | undefined;
  /**
   * metadata.generation of the NodeImage these were read from: the controller answers from a cache at least that
   * new (its cache may lag the agent's by a write that added an owner or a secret).
   */
  generation?: number | undefined;
}

export interface PullSecretCredentials {
  credentials: RegistryCredential[];
  /** Names of referenced secrets that do not exist in kruise-daemon-config (skipped; only for unowned tags). */
  missing: string[];
  /** Secrets of the image that do not exist, unnamed: the tag has owners and the copy may be another's. */
  unnamedMissing: number;
  /** Malformed secrets of one of several tenants sharing the tag, skipped unnamed. */
  unnamedMalformed: number;
}

/** Where a tag's credentials come from. */
export interface PullCredentialSource {
  /** The credentials the tag may use; throws PullSecretProblem (a message fit for the tag's status) or other errors. */
  credentials(request: TagSecretsRequest): Promise<PullSecretCredentials>;
  /** Drop cached answers for this tag (a pull failed: a secret may have been updated or copied in since). */
  forget(request: TagSecretsRequest): void;
}

export class PullSecretProblem extends Error {
  override readonly name = 'PullSecretProblem';
}

/** Collects a tag's credentials from the secrets it may use, applying the malformed-secret rule. */
export class TagCredentialsBuilder {
  readonly result: PullSecretCredentials = { credentials: [], missing: [], unnamedMissing: 0, unnamedMalformed: 0 };
  /** True when the tag's owners are one tenant (or none): a problem of a secret is theirs to read. */
  readonly singleTenant: boolean;

  constructor(readonly owners: readonly string[] | undefined) {
    this.singleTenant = ownerNamespaces(owners).size <= 1;
  }

  missing(name: string): void {
    if (this.owners === undefined) this.result.missing.push(name);
    else this.result.unnamedMissing++;
  }

  /** A usable secret, parsed; or why it cannot be used. */
  add(parsed: { credentials: RegistryCredential[] } | { problem: string }): void {
    if ('problem' in parsed) {
      if (this.singleTenant) throw new PullSecretProblem(parsed.problem);
      this.result.unnamedMalformed++;
      return;
    }
    this.result.credentials.push(...parsed.credentials);
  }
}

/** A secret's credentials, or what is wrong with it (never its content). */
export function parseSecret(secret: PullSecretObject): { credentials: RegistryCredential[] } | { problem: string } {
  try {
    return { credentials: credentialsOfSecret(secret) };
  } catch (err) {
    return { problem: errorMessage(err) };
  }
}

interface CacheEntry {
  at: number;
  /** The secret does not exist; cached like a good answer. */
  missing?: boolean;
  parsed?: { credentials: RegistryCredential[] } | { problem: string };
  /** The copy's references annotation (undefined: none). */
  references?: string[] | undefined;
}

/** The direct source: reads the copies in kruise-daemon-config (the agent-only install). */
export class PullSecretStore implements PullCredentialSource {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();

  constructor(
    private readonly read: SecretReader,
    private readonly clock: Clock,
    private readonly ttlMs = DEFAULT_SECRET_CACHE_MS,
  ) {}

  /**
   * The credentials of every referenced secret the tag may use, in order. Throws PullSecretProblem for a reference
   * outside kruise-daemon-config or a malformed secret of the tag's only tenant. API failures other than not-found
   * are thrown as is.
   */
  async credentials(request: TagSecretsRequest): Promise<PullSecretCredentials> {
    const builder = new TagCredentialsBuilder(tagOwnerKeys(request.ownerReferences));
    for (const ref of request.pullSecrets ?? []) {
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
      if (entry.missing) builder.missing(name);
      else if (tagMayUseSecret(builder.owners, entry.references) && entry.parsed) builder.add(entry.parsed);
    }
    return builder.result;
  }

  forget(request: TagSecretsRequest): void {
    for (const ref of request.pullSecrets ?? []) if (ref.name) this.cache.delete(ref.name);
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
    const entry: CacheEntry = secret
      ? { at, parsed: parseSecret(secret), references: secretReferences(secret.metadata?.annotations) }
      : { at, missing: true };
    this.cache.set(name, entry);
    return entry;
  }
}

/** How skipped secrets are told in a tag's status message and in events ('' when none). */
export function skippedSecretsMessage(
  read: Pick<PullSecretCredentials, 'missing' | 'unnamedMissing' | 'unnamedMalformed'>,
): string {
  const parts = read.missing.map((name) => `pull secret ${KRUISE_DAEMON_CONFIG_NAMESPACE}/${name} not found, skipped`);
  if (read.unnamedMissing > 0) {
    parts.push(
      `${read.unnamedMissing} pull secret(s) of the image not found in ${KRUISE_DAEMON_CONFIG_NAMESPACE}, skipped`,
    );
  }
  if (read.unnamedMalformed > 0) {
    parts.push(`${read.unnamedMalformed} malformed pull secret(s) of another owner of this tag skipped`);
  }
  return parts.join('; ');
}
