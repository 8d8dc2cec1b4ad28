// kruise-controller's configuration: flags, then environment variables, then defaults. A problem is a ConfigError
// with one line naming the flag, so the entry point prints it and exits 2.
import { parseArgs } from 'node:util';
import { KRUISE_SYSTEM_NAMESPACE } from '../api/constants.js';
import { DEFAULT_PULL_CREDENTIALS_PORT } from '../api/pull-credentials.js';
import { logLevelFromEnv } from '../observability/logger.js';
import { ConfigError } from '../util/config-error.js';

export interface ControllerOptions {
  kubeconfig?: string | undefined;
  /** Namespace the controller runs in: its Lease, its webhook Secret and Service (POD_NAMESPACE). */
  namespace: string;
  /** /livez /readyz /healthz /metrics listener. */
  addr: { host: string | undefined; port: number };
  logLevel: string;
  leaderElect: boolean;
  leaderElectionId: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  identity: string;
  nodeImageCreationDelayMs: number;
  nodeImageResponseTimeoutMs: number;
  /** A CRR no agent has given a phase this long after its creation is completed (OpenKruise: 1 min, fixed). */
  crrResponseTimeoutMs: number;
  nodeImageWorkers: number;
  imagePullJobWorkers: number;
  imageListPullJobWorkers: number;
  /** --podprobemarker-workers, --nodepodprobe-workers (OpenKruise's flags, default 3). */
  podProbeMarkerWorkers: number;
  nodePodProbeWorkers: number;
  defaultTagTtlSeconds: number;
  webhook: {
    enabled: boolean;
    host: string;
    port: number;
    certDir: string;
    secretName: string;
    serviceName: string;
    /** https://host:port the API server calls instead of the Service (outside a cluster). */
    urlBase?: string | undefined;
    /** Names in the serving certificate besides the Service's. */
    extraHosts: string[];
    /**
     * PEM file of the CA that signs the API server's webhook client certificate: when set, a caller without a
     * certificate it signed is refused before its request is read. Absent: anyone who reaches the port is answered.
     */
    clientCaFile?: string | undefined;
    /** Subject common names a client certificate may have (empty: any the CA signed). */
    clientNames: string[];
  };
  /** The agents' pull-credentials endpoint (src/controller/pullcredentials): on with the webhooks' certificate. */
  pullCredentials: {
    enabled: boolean;
    host: string;
    port: number;
    /** The Service in front of it (its names go into the serving certificate). */
    serviceName: string;
    /** The agents' ServiceAccount, `namespace/name`: only its pod-bound tokens are answered. */
    agentServiceAccount: string;
  };
}

export type ParsedControllerCommandLine = { kind: 'help' } | { kind: 'run'; options: ControllerOptions };

export const CONTROLLER_USAGE = `Usage: kruise-controller [flags]

The central controller of kruise-daemon (one active replica, leader-elected over a Lease): one NodeImage per
Node, ImagePullJob and ImageListPullJob fan-out and status, pull-secret copies in kruise-daemon-config, and the
admission webhooks (HTTPS, with a CA and serving certificate it creates and rotates).

Flags (a flag wins over its environment variable):
  --kubeconfig PATH                     kubeconfig file (env KUBECONFIG); default: in-cluster service account
  --namespace NS                        own namespace (env POD_NAMESPACE, default ${KRUISE_SYSTEM_NAMESPACE})
  --addr [HOST]:PORT                    /livez /readyz /healthz /metrics (default :8000; port 0 = any free port)
  --leader-elect BOOL                   campaign for the Lease before running controllers (default true)
  --leader-election-id NAME             Lease name (default kruise-controller)
  --lease-duration DUR                  (default 15s)   --renew-deadline DUR (10s)   --retry-period DUR (2s)
  --nodeimage-creation-delay DUR        Ready time before a Node gets its NodeImage (default 30s)
  --nodeimage-response-timeout DUR      a tag with no status this long after createdAt fails (default 10m)
  --crr-response-timeout DUR            a ContainerRecreateRequest no agent picked up this long after its creation
                                        is completed with "daemon has not responded for a long time" (default 1m)
  --nodeimage-workers N                 (default 3)  --imagepulljob-workers N (3)  --imagelistpulljob-workers N (3)
  --podprobemarker-workers N            (default 3)  --nodepodprobe-workers N (3)
  --default-ttlseconds-for-always-nodeimage N   extra TTL of Always jobs' tags (default 300)
  --webhook-port PORT                   HTTPS admission webhooks (default 9876; 0 = any free port)
  --webhook-host HOST                   bind address of the webhook server (default 0.0.0.0)
  --webhook-cert-dir DIR                where tls.crt/tls.key/ca.crt are written (default /tmp/kruise-controller-certs)
  --webhook-secret-name NAME            Secret keeping the CA and serving certificate (default kruise-webhook-certs)
  --webhook-service-name NAME           Service in front of the webhooks (default kruise-controller-webhook)
  --webhook-url-base URL                call the webhooks at this https URL instead of the Service (env WEBHOOK_URL_BASE)
  --webhook-extra-hosts LIST            comma-separated extra names/IPs for the serving certificate
  --webhook-client-ca FILE              accept webhook calls only with a client certificate this CA (PEM) signed:
                                        the API server's (env WEBHOOK_CLIENT_CA); unset = anyone is answered
  --webhook-client-names LIST           comma-separated common names the client certificate may have
                                        (env WEBHOOK_CLIENT_NAMES; default: any the CA signed)
  --disable-webhooks                    do not serve webhooks (nor the pull credentials: they share the certificate)
  --pull-credentials-port PORT          HTTPS pull credentials for agents, own listener (default 9443; 0 = any free port)
  --pull-credentials-host HOST          its bind address (default: --webhook-host)
  --pull-credentials-service-name NAME  Service in front of it (default kruise-controller-credentials)
  --agent-service-account NS/NAME       the agents' ServiceAccount (default kruise-system/kruise-daemon)
  --disable-pull-credentials            do not serve pull credentials (agents then read copies themselves)
  -h, --help                            print this help

Durations: 500ms, 30s, 10m, 1h (a bare number is seconds). LOG_LEVEL sets the log level.
Exit codes: 0 stopped cleanly, 1 failed or lost the lease, 2 bad configuration.`;

const FLAGS = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string' },
  addr: { type: 'string' },
  'leader-elect': { type: 'string' },
  'leader-election-id': { type: 'string' },
  'lease-duration': { type: 'string' },
  'renew-deadline': { type: 'string' },
  'retry-period': { type: 'string' },
  'nodeimage-creation-delay': { type: 'string' },
  'nodeimage-response-timeout': { type: 'string' },
  'crr-response-timeout': { type: 'string' },
  'nodeimage-workers': { type: 'string' },
  'imagepulljob-workers': { type: 'string' },
  'imagelistpulljob-workers': { type: 'string' },
  'podprobemarker-workers': { type: 'string' },
  'nodepodprobe-workers': { type: 'string' },
  'default-ttlseconds-for-always-nodeimage': { type: 'string' },
  'webhook-port': { type: 'string' },
  'webhook-host': { type: 'string' },
  'webhook-cert-dir': { type: 'string' },
  'webhook-secret-name': { type: 'string' },
  'webhook-service-name': { type: 'string' },
  'webhook-url-base': { type: 'string' },
  'webhook-extra-hosts': { type: 'string' },
  'webhook-client-ca': { type: 'string' },
  'webhook-client-names': { type: 'string' },
  'disable-webhooks': { type: 'boolean' },
  'pull-credentials-port': { type: 'string' },
  'pull-credentials-host': { type: 'string' },
  'pull-credentials-service-name': { type: 'string' },
  'agent-service-account': { type: 'string' },
  'disable-pull-credentials': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new ConfigError(`--${flag}: ${JSON.stringify(text)} is not a duration (500ms, 30s, 10m, 1h)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000;
  return Math.round(Number(m[1]) * unit);
}

function integer(text: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`--${flag}: ${JSON.stringify(text)} must be an integer from ${min} to ${max}`);
  }
  return Number(text);
}

function boolean(text: string | undefined, flag: string, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new ConfigError(`--${flag}: ${JSON.stringify(text)} must be true or false`);
}

export function parseAddr(text: string, flag: string): { host: string | undefined; port: number } {
  const i = text.lastIndexOf(':');
  if (i < 0) throw new ConfigError(`--${flag}: ${JSON.stringify(text)} must be [HOST]:PORT`);
  const host = text.slice(0, i).replace(/^\[|\]$/g, '') || undefined;
  return { host, port: integer(text.slice(i + 1), flag, 0, 0, 65535) };
}

export function parseControllerCommandLine(argv: string[], env: NodeJS.ProcessEnv): ParsedControllerCommandLine {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: FLAGS, allowPositionals: false, strict: true }));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  if (values.help) return { kind: 'help' };
  let logLevel: string;
  try {
    logLevel = logLevelFromEnv(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const urlBase = values['webhook-url-base'] ?? env.WEBHOOK_URL_BASE;
  if (urlBase !== undefined && !/^https:\/\/[^/]+/.test(urlBase)) {
    throw new ConfigError(`--webhook-url-base: ${JSON.stringify(urlBase)} must be an https:// URL`);
  }
  const clientNames = values['webhook-client-names'] ?? env.WEBHOOK_CLIENT_NAMES;
  if (commaList(clientNames).length > 0 && !nonEmpty(values['webhook-client-ca'] ?? env.WEBHOOK_CLIENT_CA)) {
    throw new ConfigError('--webhook-client-names: needs --webhook-client-ca (names are checked on its certificates)');
  }
  const leaseDurationMs = parseDuration(values['lease-duration'] ?? '15s', 'lease-duration');
  const renewDeadlineMs = parseDuration(values['renew-deadline'] ?? '10s', 'renew-deadline');
  const retryPeriodMs = parseDuration(values['retry-period'] ?? '2s', 'retry-period');
  const crrResponseTimeoutMs = parseDuration(values['crr-response-timeout'] ?? '1m', 'crr-response-timeout');
  if (crrResponseTimeoutMs < 1000) throw new ConfigError('--crr-response-timeout: must be at least 1s');
  const agentServiceAccount = values['agent-service-account'] ?? `${KRUISE_SYSTEM_NAMESPACE}/kruise-daemon`;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(agentServiceAccount)) {
    throw new ConfigError(`--agent-service-account: ${JSON.stringify(agentServiceAccount)} must be NAMESPACE/NAME`);
  }
  if (!(leaseDurationMs > renewDeadlineMs && renewDeadlineMs > 1.2 * retryPeriodMs && retryPeriodMs > 0)) {
    throw new ConfigError('--lease-duration > --renew-deadline > 1.2 x --retry-period > 0 must hold');
  }
  return {
    kind: 'run',
    options: {
      kubeconfig: values.kubeconfig ?? env.KUBECONFIG,
      namespace: values.namespace ?? env.POD_NAMESPACE ?? KRUISE_SYSTEM_NAMESPACE,
      addr: parseAddr(values.addr ?? ':8000', 'addr'),
      logLevel,
      leaderElect: boolean(values['leader-elect'], 'leader-elect', true),
      leaderElectionId: values['leader-election-id'] ?? 'kruise-controller',
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
      identity: env.POD_NAME ?? `${env.HOSTNAME ?? 'kruise-controller'}_${process.pid}`,
      nodeImageCreationDelayMs: parseDuration(values['nodeimage-creation-delay'] ?? '30s', 'nodeimage-creation-delay'),
      nodeImageResponseTimeoutMs: parseDuration(
        values['nodeimage-response-timeout'] ?? '10m',
        'nodeimage-response-timeout',
      ),
      crrResponseTimeoutMs,
      nodeImageWorkers: integer(values['nodeimage-workers'], 'nodeimage-workers', 3, 1, 64),
      imagePullJobWorkers: integer(values['imagepulljob-workers'], 'imagepulljob-workers', 3, 1, 64),
      imageListPullJobWorkers: integer(values['imagelistpulljob-workers'], 'imagelistpulljob-workers', 3, 1, 64),
      podProbeMarkerWorkers: integer(values['podprobemarker-workers'], 'podprobemarker-workers', 3, 1, 64),
      nodePodProbeWorkers: integer(values['nodepodprobe-workers'], 'nodepodprobe-workers', 3, 1, 64),
      defaultTagTtlSeconds: integer(
        values['default-ttlseconds-for-always-nodeimage'],
        'default-ttlseconds-for-always-nodeimage',
        300,
        0,
        2_678_400,
      ),
      webhook: {
        enabled: !values['disable-webhooks'],
        host: values['webhook-host'] ?? '0.0.0.0',
        port: integer(values['webhook-port'], 'webhook-port', 9876, 0, 65535),
        certDir: values['webhook-cert-dir'] ?? '/tmp/kruise-controller-certs',
        secretName: values['webhook-secret-name'] ?? 'kruise-webhook-certs',
        serviceName: values['webhook-service-name'] ?? 'kruise-controller-webhook',
        urlBase,
        extraHosts: commaList(values['webhook-extra-hosts']),
        clientCaFile: nonEmpty(values['webhook-client-ca'] ?? env.WEBHOOK_CLIENT_CA),
        clientNames: commaList(values['webhook-client-names'] ?? env.WEBHOOK_CLIENT_NAMES),
      },
      pullCredentials: {
        enabled: !values['disable-webhooks'] && !values['disable-pull-credentials'],
        host: values['pull-credentials-host'] ?? values['webhook-host'] ?? '0.0.0.0',
        port: integer(
          values['pull-credentials-port'],
          'pull-credentials-port',
          DEFAULT_PULL_CREDENTIALS_PORT,
          0,
          65535,
        ),
        serviceName: values['pull-credentials-service-name'] ?? 'kruise-controller-credentials',
        agentServiceAccount,
      },
    },
  };
}

function commaList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
