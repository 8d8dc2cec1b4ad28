// Who may call the admission webhooks: only the API server, known by its webhook client certificate (the
// AdmissionConfiguration's kubeConfigFile on kube-apiserver). The TLS layer asks every caller for a certificate and
// checks it against the configured client CA; this module reads that CA and decides, per connection, before a byte
// of the request body is read, whether the caller is refused (401: no certificate; 403: one the CA did not sign, or
// a common name outside the allowed list).
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { TLSSocket } from 'node:tls';

export interface ClientAuthPolicy {
  /** PEM of one or more CA certificates. */
  caPem: string;
  /** Allowed subject common names (empty: any certificate the CA signed). */
  names: readonly string[];
}

export interface ClientRefusal {
  code: 401 | 403;
  message: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The CA certificates of a PEM text; throws naming `source` when there is none or one does not parse. */
export function parseClientCa(pem: string, source: string): string {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`${source} holds no PEM certificate`);
  for (const block of blocks) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch (err) {
      throw new Error(`${source}: a certificate does not parse: ${(err as Error).message}`);
    }
    if (!cert.ca) throw new Error(`${source}: ${cert.subject.replace(/\n/g, ', ')} is not a CA certificate`);
  }
  return `${blocks.join('\n')}\n`;
}

/** Read and check the client CA file (`--webhook-client-ca`). */
export async function loadClientCa(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`--webhook-client-ca: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseClientCa(text, `--webhook-client-ca ${file}`);
}

/** Why the caller on this connection is refused, or undefined when it is the API server. */
export function clientRefusal(socket: TLSSocket, names: readonly string[]): ClientRefusal | undefined {
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) {
    return { code: 401, message: 'a client certificate is required: only the API server calls these webhooks' };
  }
  if (!socket.authorized) {
    return {
      code: 403,
      message: `the client certificate is not signed by the webhook client CA (${String(socket.authorizationError)})`,
    };
  }
  const cn = peer.subject?.CN;
  const commonName = Array.isArray(cn) ? cn.join(',') : (cn ?? '');
  if (names.length > 0 && !names.includes(commonName)) {
    return { code: 403, message: `client certificate ${JSON.stringify(commonName)} is not an allowed caller` };
  }
  return undefined;
}
