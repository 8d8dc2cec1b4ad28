// A CA and a serving certificate for the admission webhooks (X.509 built with node-forge; RSA keys from node:crypto,
// which is much faster than forge's own key generation). PEM in, PEM out.
import { X509Certificate, generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

export interface WebhookCertificates {
  ca: CertificatePair;
  serving: CertificatePair;
}

export interface CertificateOptions {
  /** DNS names (and IP addresses) the serving certificate is valid for. */
  hosts: string[];
  now: number;
  /** Validity of the CA (default 10 years) and the serving certificate (default 1 year). */
  caValidityMs?: number;
  servingValidityMs?: number | undefined;
}

const YEAR_MS = 365 * 24 * 3600 * 1000;
const IP = /^(\d{1,3}\.){3}\d{1,3}$|:/;

function newKeys(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; keyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return {
    privateKey: forge.pki.privateKeyFromPem(privateKey),
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    keyPem: privateKey,
  };
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f; // positive
  return bytes.toString('hex');
}

export function createCa(now: number, validityMs = 10 * YEAR_MS): CertificatePair {
  const keys = newKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + validityMs);
  const subject = [{ name: 'commonName', value: 'kruise-controller-webhook-ca' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

export function createServingCertificate(ca: CertificatePair, options: CertificateOptions): CertificatePair {
  if (options.hosts.length === 0) throw new Error('a serving certificate needs at least one host name');
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = newKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(options.now - 60_000);
  cert.validity.notAfter = new Date(options.now + (options.servingValidityMs ?? YEAR_MS));
  cert.setSubject([{ name: 'commonName', value: options.hosts[0]! }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: options.hosts.map((h) => (IP.test(h) ? { type: 7, ip: h } : { type: 2, value: h })),
    },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

export function createWebhookCertificates(options: CertificateOptions): WebhookCertificates {
  const ca = createCa(options.now, options.caValidityMs);
  return { ca, serving: createServingCertificate(ca, options) };
}

/** notAfter of a PEM certificate (ms since the epoch). */
export function notAfterOf(certPem: string): number {
  return Date.parse(new X509Certificate(certPem).validTo);
}

/** Does the serving certificate chain to the CA and cover every host? */
export function servingMatches(certs: WebhookCertificates, hosts: readonly string[]): boolean {
  try {
    const ca = new X509Certificate(certs.ca.certPem);
    const serving = new X509Certificate(certs.serving.certPem);
    if (!serving.verify(ca.publicKey)) return false;
    return hosts.every((h) => (IP.test(h) ? serving.checkIP(h) !== undefined : serving.checkHost(h) !== undefined));
  } catch {
    return false;
  }
}
