// A kubeconfig for the emulator: one cluster (plain http on loopback), one user without credentials.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export function kubeconfigText(url: string, contextName = 'kruise-emulator'): string {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses plain http unless insecure-skip-tls-verify is set (there is no TLS to verify).
    clusters: [{ name: contextName, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: contextName, user: {} }],
    contexts: [{ name: contextName, context: { cluster: contextName, user: contextName, namespace: 'default' } }],
    'current-context': contextName,
    preferences: {},
  };
  // JSON is valid YAML; kubectl and client-node read it as a kubeconfig.
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export async function writeKubeconfig(path: string, url: string): Promise<void> {
  if (!/^http:\/\/[^/]+$/.test(url.replace(/\/$/, ''))) {
    throw new Error(`writeKubeconfig: expected an http://host:port URL, got ${JSON.stringify(url)}`);
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, kubeconfigText(url.replace(/\/$/, '')), { mode: 0o600 });
}
