// The webhook side of the controller: certificates (Secret-backed, rotated), the HTTPS router with the image
// handlers, and the webhook configurations pointed at this server with the CA as caBundle.
import type { Logger } from 'pino';
import type { KubeClient } from '../../kube/client.js';
import type { Clock } from '../../util/clock.js';
import type { ControllerOptions } from '../options.js';
import type { ControllerMetrics } from '../shared/metrics.js';
import { CertManager } from './cert-manager.js';
import { loadClientCa, type ClientAuthPolicy } from './client-auth.js';
import type { WebhookCertificates } from './certs.js';
import { ensureWebhookConfigurations, type WebhookTarget } from './configurations.js';
import { imageWebhookHandlers } from './images/handlers.js';
import { apiReader, crrWebhookHandlers } from './crr/handler.js';
import { launchPriorityWebhookHandlers } from './launchpriority/handler.js';
import { apiPersistentPodStateReader, persistentPodStateWebhookHandlers } from './persistentpodstate/handler.js';
import { podProbeMarkerWebhookHandlers } from './podprobemarker/handler.js';
import { WebhookServer } from './server.js';

export interface RunningWebhooks {
  port: number;
  server: WebhookServer;
  /** Throws while the webhooks are not ready (readiness check). */
  check(): void;
  stop(): Promise<void>;
}

export interface StartWebhooksOptions {
  client: KubeClient;
  options: ControllerOptions;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
  /** Told the certificates at start and after each rotation (the pull-credentials listener serves them too). */
  onCertificates?: (certificates: WebhookCertificates) => void;
}

export async function startWebhooks(o: StartWebhooksOptions): Promise<RunningWebhooks> {
  const { client, options, clock, logger, metrics } = o;
  const service = { namespace: options.namespace, name: options.webhook.serviceName, port: 443 };
  const hosts = [
    `${service.name}.${service.namespace}.svc`,
    `${service.name}.${service.namespace}.svc.cluster.local`,
    `${service.name}.${service.namespace}`,
    service.name,
    ...options.webhook.extraHosts,
    ...(options.pullCredentials.enabled ? serviceHosts(options.pullCredentials.serviceName, options.namespace) : []),
  ];
  if (options.webhook.urlBase) hosts.unshift(new URL(options.webhook.urlBase).hostname.replace(/^\[|\]$/g, ''));
  const certs = new CertManager({
    client,
    namespace: options.namespace,
    secretName: options.webhook.secretName,
    hosts,
    certDir: options.webhook.certDir,
    clock,
    logger,
    metrics,
  });
  await certs.ensure();
  const current = certs.certificates!;
  const clientCaFile = options.webhook.clientCaFile;
  let clientAuth: ClientAuthPolicy | undefined;
  if (clientCaFile) {
    clientAuth = { caPem: await loadClientCa(clientCaFile), names: options.webhook.clientNames };
    logger.info(
      { clientCa: clientCaFile, names: options.webhook.clientNames },
      'admission webhooks answer only callers with a client certificate the webhook client CA signed',
    );
  } else {
    logger.warn(
      'admission webhooks are NOT authenticating their callers (no --webhook-client-ca): anyone who reaches the ' +
        'webhook port can send forged AdmissionReviews and read the answers; configure the API server to present a ' +
        'client certificate to webhooks and pass its CA (docs/install.md, "The webhook accepts only the API server")',
    );
  }
  metrics.webhookClientAuth.set(clientAuth ? 1 : 0);
  o.onCertificates?.(current);
  const server = new WebhookServer({
    certPem: current.serving.certPem,
    keyPem: current.serving.keyPem,
    logger,
    metrics,
    clientAuth,
  });
  // the client CA file may be rotated (a ConfigMap volume updates in place): read it again on every check
  const reloadClientCa = async (): Promise<void> => {
    if (!clientCaFile || !clientAuth) return;
    const caPem = await loadClientCa(clientCaFile);
    if (caPem === clientAuth.caPem) return;
    clientAuth = { ...clientAuth, caPem };
    server.setClientAuth(clientAuth);
    logger.info({ clientCa: clientCaFile }, 'webhook client CA reloaded');
  };
  for (const [path, handler] of Object.entries(imageWebhookHandlers(clock))) server.route(path, handler);
  for (const [path, handler] of Object.entries(crrWebhookHandlers(apiReader(client)))) server.route(path, handler);
  for (const [path, handler] of Object.entries(launchPriorityWebhookHandlers())) server.route(path, handler);
  const ppsReader = apiPersistentPodStateReader(client);
  for (const [path, handler] of Object.entries(persistentPodStateWebhookHandlers(ppsReader)))
    server.route(path, handler);
  for (const [path, handler] of Object.entries(podProbeMarkerWebhookHandlers())) server.route(path, handler);
  const port = await server.listen(options.webhook.host, options.webhook.port);
  const target = (): WebhookTarget => ({
    urlBase: options.webhook.urlBase,
    service,
    caBundlePem: certs.certificates!.ca.certPem,
  });
  let configured = false;
  const configure = async (): Promise<void> => {
    await ensureWebhookConfigurations(client, target());
    configured = true;
  };
  await configure().catch((err: unknown) => logger.warn({ err }, 'webhook configurations not written yet; retrying'));
  logger.info({ port, paths: server.paths() }, 'admission webhooks serving');

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  };
  const tick = async (): Promise<void> => {
    try {
      if (await certs.ensure()) {
        const c = certs.certificates!;
        server.setCertificate(c.serving.certPem, c.serving.keyPem);
        o.onCertificates?.(c);
        logger.info('webhook certificate rotated');
        configured = false;
      }
      if (!configured) await configure();
      await reloadClientCa();
      schedule(Math.min(certs.nextCheckInMs(), 60_000));
    } catch (err) {
      logger.warn({ err }, 'webhook certificate check failed; retrying');
      schedule(5000);
    }
  };
  schedule(configured ? Math.min(certs.nextCheckInMs(), 60_000) : 1000);

  return {
    port,
    server,
    check() {
      if (!configured) throw new Error('webhook configurations not written yet');
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await server.close();
    },
  };
}

/** The DNS names of a Service, as a serving certificate for it lists them. */
function serviceHosts(name: string, namespace: string): string[] {
  return [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`];
}
