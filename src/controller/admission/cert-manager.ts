// Keeps the webhook certificates: loads them from a Secret (kruise-system/kruise-webhook-certs), creates a CA and a
// serving certificate when missing, invalid or close to expiry, stores them back (a resourceVersion-checked write, so
// two replicas agree on one set), writes them to the cert dir for the HTTPS server and the CA into the webhook
// configurations' caBundle. check() is called at start and then periodically.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { KubeClient } from '../../kube/client.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/errors.js';
import { CoreResources } from '../../kube/resource.js';
import type { Clock } from '../../util/clock.js';
import type { SecretObject } from '../resources.js';
import type { ControllerMetrics } from '../shared/metrics.js';
import {
  createServingCertificate,
  createWebhookCertificates,
  notAfterOf,
  servingMatches,
  type WebhookCertificates,
} from './certs.js';

export const CA_CERT_KEY = 'ca.crt';
export const CA_KEY_KEY = 'ca.key';
export const TLS_CERT_KEY = 'tls.crt';
export const TLS_KEY_KEY = 'tls.key';

export interface CertManagerOptions {
  client: KubeClient;
  namespace: string;
  secretName: string;
  hosts: string[];
  /** Directory the serving certificate and key are written to (tls.crt, tls.key, ca.crt). */
  certDir: string;
  /** Renew when less than this is left of the serving certificate or the CA (default 30 days). */
  renewBeforeMs?: number;
  servingValidityMs?: number;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
}

const DAY_MS = 24 * 3600 * 1000;

export class CertManager {
  private current?: WebhookCertificates;

  constructor(private readonly o: CertManagerOptions) {}

  get certificates(): WebhookCertificates | undefined {
    return this.current;
  }

  /** Make sure valid certificates are in the Secret and the cert dir; returns true when they changed. */
  async ensure(): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ensureOnce();
      } catch (err) {
        if ((!isConflict(err) && !isAlreadyExists(err)) || attempt >= 5) throw err;
      }
    }
  }

  private async ensureOnce(): Promise<boolean> {
    const { client, namespace, secretName } = this.o;
    let secret: SecretObject | undefined;
    try {
      secret = await client.get<SecretObject>(CoreResources.secrets, secretName, { namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const stored = secret ? fromSecret(secret) : undefined;
    let certs = stored;
    if (!certs || !this.usable(certs)) {
      const now = this.o.clock.now();
      const options = { hosts: this.o.hosts, now, servingValidityMs: this.o.servingValidityMs };
      // A CA with time left signs the new serving certificate: the caBundle stays, replicas still serving the
      // previous certificate stay trusted. Only a CA close to its end is replaced.
      certs =
        stored && notAfterOf(stored.ca.certPem) - now > this.renewBeforeMs()
          ? { ca: stored.ca, serving: createServingCertificate(stored.ca, options) }
          : createWebhookCertificates(options);
      const data = toSecretData(certs);
      if (secret) {
        await client.update<SecretObject>(CoreResources.secrets, { ...secret, type: secret.type, data });
      } else {
        await client.create<SecretObject>(CoreResources.secrets, {
          metadata: { name: secretName, namespace, labels: { 'app.kubernetes.io/name': 'kruise-controller' } },
          type: 'kubernetes.io/tls',
          data,
        });
      }
      this.o.logger.info(
        { notAfter: new Date(notAfterOf(certs.serving.certPem)).toISOString() },
        'webhook certificates created',
      );
    }
    const changed =
      this.current?.serving.certPem !== certs.serving.certPem || this.current.ca.certPem !== certs.ca.certPem;
    if (changed) {
      await mkdir(this.o.certDir, { recursive: true, mode: 0o700 });
      await writeFile(join(this.o.certDir, TLS_CERT_KEY), certs.serving.certPem, { mode: 0o600 });
      await writeFile(join(this.o.certDir, TLS_KEY_KEY), certs.serving.keyPem, { mode: 0o600 });
      await writeFile(join(this.o.certDir, CA_CERT_KEY), certs.ca.certPem, { mode: 0o600 });
      this.current = certs;
    }
    this.o.metrics.certificateExpiry.set({ certificate: 'ca' }, notAfterOf(certs.ca.certPem) / 1000);
    this.o.metrics.certificateExpiry.set({ certificate: 'serving' }, notAfterOf(certs.serving.certPem) / 1000);
    return changed;
  }

  /** When to check again: halfway to the renewal point, at most a day, at least a second. */
  nextCheckInMs(): number {
    if (!this.current) return 1000;
    const renewAt = notAfterOf(this.current.serving.certPem) - this.renewBeforeMs();
    return Math.min(DAY_MS, Math.max(1000, (renewAt - this.o.clock.now()) / 2));
  }

  private renewBeforeMs(): number {
    return this.o.renewBeforeMs ?? 30 * DAY_MS;
  }

  private usable(certs: WebhookCertificates): boolean {
    const now = this.o.clock.now();
    const left = Math.min(notAfterOf(certs.serving.certPem), notAfterOf(certs.ca.certPem)) - now;
    return left > this.renewBeforeMs() && servingMatches(certs, this.o.hosts);
  }
}

function fromSecret(secret: SecretObject): WebhookCertificates | undefined {
  const d = secret.data ?? {};
  const get = (k: string): string | undefined => (d[k] ? Buffer.from(d[k], 'base64').toString('utf8') : undefined);
  const caCert = get(CA_CERT_KEY);
  const caKey = get(CA_KEY_KEY);
  const cert = get(TLS_CERT_KEY);
  const key = get(TLS_KEY_KEY);
  if (!caCert || !caKey || !cert || !key) return undefined;
  try {
    notAfterOf(caCert);
    notAfterOf(cert);
  } catch {
    return undefined;
  }
  return { ca: { certPem: caCert, keyPem: caKey }, serving: { certPem: cert, keyPem: key } };
}

function toSecretData(certs: WebhookCertificates): Record<string, string> {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return {
    [CA_CERT_KEY]: b64(certs.ca.certPem),
    [CA_KEY_KEY]: b64(certs.ca.keyPem),
    [TLS_CERT_KEY]: b64(certs.serving.certPem),
    [TLS_KEY_KEY]: b64(certs.serving.keyPem),
  };
}
