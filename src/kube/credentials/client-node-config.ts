// For the controller and command-line tools, which may load client-node whole: a client-node KubeConfig equal to a
// Connection. client-node is imported lazily here, so importing this module costs the agent nothing until called.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Connection } from './connection.js';

/**
 * Build a client-node KubeConfig from a Connection. A rotating token is copied as it is now: for long-lived
 * in-cluster processes prefer client-node's own loadFromCluster(), which re-reads the token file.
 */
export async function toClientNodeKubeConfig(connection: Connection): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  const b64 = (buf?: Buffer): string | undefined => buf?.toString('base64');
  const user: Record<string, string | undefined> = {
    name: 'user',
    certData: b64(connection.cert),
    keyData: b64(connection.key),
  };
  if (connection.auth.kind === 'token') user.token = await connection.auth.source.token();
  if (connection.auth.kind === 'basic') {
    user.username = connection.auth.username;
    user.password = connection.auth.password;
  }
  kc.loadFromOptions({
    clusters: [
      {
        name: 'cluster',
        server: connection.server,
        caData: b64(connection.ca),
        skipTLSVerify: connection.insecureSkipTLSVerify,
        tlsServerName: connection.tlsServerName,
      },
    ],
    users: [user],
    contexts: [{ name: 'context', cluster: 'cluster', user: 'user', namespace: connection.namespace }],
    currentContext: 'context',
  });
  return kc;
}
