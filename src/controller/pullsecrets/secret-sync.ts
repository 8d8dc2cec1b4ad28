// Pull-secret copies: the agent reads secrets only in kruise-daemon-config, so each secret a job names is copied
// there. One copy per source secret (deterministic name `<source>-<hash>`), shared by every job naming it; the
// annotation imagepulljobs.kruise.io/references lists the jobs (`ns/name`, sorted). The copy follows its source's
// data and is deleted when no job references it any more. Every write is a fresh read + checked update.
// Least privilege: the secrets cached are the copies (an informer on kruise-daemon-config) and the sources jobs name,
// each by a watch of that one secret (source-watches.ts: fieldSelector metadata.name, so RBAC resourceNames suffice).
// A source its watch does not know yet (first reference, failing watch) is read with a named GET: 404 → missing,
// 403 → forbidden (the controller was not granted access there), both reported by the job.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  KRUISE_DAEMON_CONFIG_NAMESPACE,
  REFERENCE_OBJECT_MODE_BATCH,
  SECRET_MODE_ANNOTATION,
  SECRET_REFERENCES_ANNOTATION,
  SECRET_SOURCE_KEY_ANNOTATION,
  SECRET_SOURCE_UID_LABEL,
} from '../../api/constants.js';
import { isDnsSubdomainName } from '../../api/label-selector.js';
import type { ReferenceObject } from '../../api/nodeimage.js';
import type { KubeClient } from '../../kube/client.js';
import { isAlreadyExists, isForbidden, isNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer/informer.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { CoreResources } from '../../kube/resource.js';
import type { Clock } from '../../util/clock.js';
import type { SecretObject } from '../resources.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import type { ControllerMetrics } from '../shared/metrics.js';
import { SourceWatches } from './source-watches.js';

/** Index of the secrets cache: the source key (`ns/name`) a copy was made from. */
export const SOURCE_KEY_INDEX = 'sourceKey';

export function sourceKeyOf(secret: SecretObject): string[] {
  const key = secret.metadata?.annotations?.[SECRET_SOURCE_KEY_ANNOTATION];
  return secret.metadata?.namespace === KRUISE_DAEMON_CONFIG_NAMESPACE && key ? [key] : [];
}

/** The copy's name: the source name (shortened to fit) and 8 hex characters of a hash of `ns/name`. */
export function copyNameFor(sourceNamespace: string, sourceName: string): string {
  const hash = createHash('sha256').update(`${sourceNamespace}/${sourceName}`).digest('hex').slice(0, 8);
  return `${sourceName.slice(0, 253 - 9).replace(/[.-]+$/, '')}-${hash}`;
}

export function referencesOf(secret: SecretObject): string[] {
  const value = secret.metadata?.annotations?.[SECRET_REFERENCES_ANNOTATION] ?? '';
  return value.split(',').filter((s) => s !== '');
}

export interface SecretSyncResult {
  refs: ReferenceObject[];
  /** Source secrets that do not exist (the job's status/events say so). */
  missing: string[];
  /** Source secrets the controller may not read (403): its ClusterRole is not bound in the job's namespace. */
  forbidden: string[];
}

type SourceRead = { secret: SecretObject } | { problem: 'missing' | 'forbidden' };

export interface PullSecretSyncOptions {
  clock?: Clock;
  logger?: Logger;
}

export class PullSecretSync {
  private readonly sources: SourceWatches;

  /** `copies`: the secrets informer, on namespace kruise-daemon-config only. */
  constructor(
    private readonly client: KubeClient,
    private readonly copies: Informer<SecretObject>,
    private readonly metrics: ControllerMetrics,
    options: PullSecretSyncOptions = {},
  ) {
    this.sources = new SourceWatches({
      client,
      clock: options.clock,
      logger: options.logger,
      onCount: (n) => metrics.secretSourceWatches.set(n),
    });
  }

  /** `listener(jobKey)` whenever a source secret that job references changes; returns the remover. */
  onSourceChange(listener: (jobKey: string) => void): () => void {
    return this.sources.onChange(listener);
  }

  /** Stop every source watch. */
  async stop(): Promise<void> {
    await this.sources.stop();
  }

  /** Make sure a copy of each named secret exists and lists `jobKey`; returns the references for NodeImages. */
  async claim(jobNamespace: string, jobKey: string, names: readonly string[]): Promise<SecretSyncResult> {
    const result: SecretSyncResult = { refs: [], missing: [], forbidden: [] };
    if (jobNamespace === KRUISE_DAEMON_CONFIG_NAMESPACE) {
      result.refs = names.map((name) => ({ namespace: KRUISE_DAEMON_CONFIG_NAMESPACE, name }));
      return result;
    }
    const sourceKeys = new Set<string>();
    for (const name of [...new Set(names)]) {
      if (!isDnsSubdomainName(name)) {
        result.missing.push(name); // no secret can have that name
        continue;
      }
      sourceKeys.add(`${jobNamespace}/${name}`);
      const read = await this.readSource(jobNamespace, name, jobKey);
      if ('problem' in read) {
        result[read.problem].push(name);
        continue;
      }
      const source = read.secret;
      const copyName = copyNameFor(jobNamespace, name);
      const cached = this.copies.get(`${KRUISE_DAEMON_CONFIG_NAMESPACE}/${copyName}`);
      if (!cached || !upToDate(cached, source, jobKey)) await this.writeCopy(copyName, source, jobKey);
      result.refs.push({
        namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
        name: copyName,
        mode: REFERENCE_OBJECT_MODE_BATCH,
      });
    }
    // Copies this job referenced but no longer names (pullSecrets are immutable, so only after odd edits).
    const keep = new Set(result.refs.map((r) => r.name));
    await this.releaseWhere(jobKey, (copy) => !keep.has(copy.metadata?.name ?? ''));
    await this.sources.release(jobKey, sourceKeys);
    return result;
  }

  /** Drop `jobKey` from every copy and source watch; a copy or watch no job references any more goes. */
  async release(jobKey: string): Promise<void> {
    await this.releaseWhere(jobKey, () => true);
    await this.sources.release(jobKey);
  }

  private async releaseWhere(jobKey: string, which: (copy: SecretObject) => boolean): Promise<void> {
    for (const copy of this.copies.list()) {
      if (copy.metadata?.namespace !== KRUISE_DAEMON_CONFIG_NAMESPACE) continue;
      if (!referencesOf(copy).includes(jobKey) || !which(copy)) continue;
      const name = copy.metadata.name ?? '';
      let empty = false;
      await updateFromFresh<SecretObject>(
        this.client,
        CoreResources.secrets,
        name,
        KRUISE_DAEMON_CONFIG_NAMESPACE,
        (draft) => {
          const refs = referencesOf(draft);
          if (!refs.includes(jobKey)) return false;
          const left = refs.filter((r) => r !== jobKey);
          empty = left.length === 0;
          if (empty) return false;
          draft.metadata!.annotations![SECRET_REFERENCES_ANNOTATION] = left.join(',');
          return true;
        },
      );
      if (empty) {
        await this.client
          .delete(CoreResources.secrets, name, { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE })
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
        this.metrics.secretCopies.inc({ action: 'delete' });
      }
    }
  }

  /** The source as its watch knows it; while the watch does not (yet), a named GET. */
  private async readSource(namespace: string, name: string, jobKey: string): Promise<SourceRead> {
    const watched = this.sources.reference(namespace, name, jobKey);
    if (watched.known) return watched.secret ? { secret: watched.secret } : { problem: 'missing' };
    try {
      return { secret: await this.client.get<SecretObject>(CoreResources.secrets, name, { namespace }) };
    } catch (err) {
      if (isNotFound(err)) return { problem: 'missing' };
      if (isForbidden(err)) return { problem: 'forbidden' };
      throw err;
    }
  }

  private async writeCopy(copyName: string, source: SecretObject, jobKey: string): Promise<void> {
    const { written, object } = await updateFromFresh<SecretObject>(
      this.client,
      CoreResources.secrets,
      copyName,
      KRUISE_DAEMON_CONFIG_NAMESPACE,
      (draft) => {
        if (upToDate(draft, source, jobKey)) return false;
        fillCopy(draft, source, [...referencesOf(draft), jobKey]);
        return true;
      },
    );
    if (written) {
      this.metrics.secretCopies.inc({ action: 'update' });
      return;
    }
    if (object) return;
    const copy: SecretObject = { metadata: { name: copyName, namespace: KRUISE_DAEMON_CONFIG_NAMESPACE } };
    fillCopy(copy, source, [jobKey]);
    try {
      await this.client.create(CoreResources.secrets, copy);
      this.metrics.secretCopies.inc({ action: 'create' });
    } catch (err) {
      // Another job's worker made it first: join it.
      if (!isAlreadyExists(err)) throw err;
      await this.writeCopy(copyName, source, jobKey);
    }
  }
}

function upToDate(copy: SecretObject, source: SecretObject, jobKey: string): boolean {
  return (
    referencesOf(copy).includes(jobKey) &&
    (copy.type ?? '') === (source.type ?? '') &&
    jsonEqual(copy.data ?? {}, source.data ?? {})
  );
}

function fillCopy(copy: SecretObject, source: SecretObject, references: string[]): void {
  const srcMeta = source.metadata ?? {};
  const sourceKey = `${srcMeta.namespace ?? ''}/${srcMeta.name ?? ''}`;
  copy.metadata ??= {};
  copy.metadata.labels = { ...(srcMeta.labels ?? {}), [SECRET_SOURCE_UID_LABEL]: srcMeta.uid ?? '' };
  copy.metadata.annotations = {
    ...(copy.metadata.annotations ?? {}),
    [SECRET_SOURCE_KEY_ANNOTATION]: sourceKey,
    [SECRET_MODE_ANNOTATION]: REFERENCE_OBJECT_MODE_BATCH,
    [SECRET_REFERENCES_ANNOTATION]: [...new Set(references)].sort().join(','),
  };
  if (source.type) copy.type = source.type;
  copy.data = { ...(source.data ?? {}) };
}
