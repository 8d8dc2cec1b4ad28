// The agents' pull-credentials endpoint as a part of kruise-controller, on every replica (like the webhooks, so a
// Service can send an agent to any of them): its own caches (every NodeImage, the secrets of kruise-daemon-config;
// the leader's controllers keep theirs), the TokenReview cache, the HTTPS listener, and the CA of the serving
// certificate published in ConfigMap kruise-daemon-config/kruise-controller-ca for the agents to trust.
import type { Logger } from 'pino';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../../api/constants.js';
import { NODE_IMAGES, type NodeImage } from '../../api/nodeimage.js';
import { CONTROLLER_CA_CONFIGMAP, CONTROLLER_CA_KEY } from '../../api/pull-credentials.js';
import type { KubeClient } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import { Informer } from '../../kube/informer/informer.js';
import type { KubeMetrics } from '../../kube/metrics.js';
import type { KubeObject } from '../../kube/object.js';
import { CoreResources } from '../../kube/resource.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';
import type { WebhookCertificates } from '../admission/certs.js';
import type { SecretObject } from '../resources.js';
import { AgentIdentities } from './agent-identity.js';
import { PullCredentialsServer } from './server.js';

interface ConfigMapObject extends KubeObject {
  data?: Record<string, string>;
}

export interface PullCredentialsEndpointOptions {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  kubeMetrics?: KubeMetrics | undefined;
  host: string;
  port: number;
  agentServiceAccount: string;
}

const CA_RETRY_MS = 10_000;

export class PullCredentialsEndpoint {
  private readonly nodeImages: Informer<NodeImage>;
  private readonly secrets: Informer<SecretObject>;
  private readonly identities: AgentIdentities;
  private server?: PullCredentialsServer;
  private certs?: WebhookCertificates;
  private publishedCa?: string;
  private caTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly o: PullCredentialsEndpointOptions) {
    const common = { clock: o.clock, logger: o.logger, metrics: o.kubeMetrics };
    this.nodeImages = new Informer<NodeImage>(NODE_IMAGES, o.client, { ...common, name: 'credentials-nodeimages' });
    this.secrets = new Informer<SecretObject>(CoreResources.secrets, o.client, {
      ...common,
      name: 'credentials-secrets',
      namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
    });
    this.identities = new AgentIdentities({ client: o.client, clock: o.clock, serviceAccount: o.agentServiceAccount });
  }

  /** The webhooks' certificates, at start and after a rotation. */
  certificates(certs: WebhookCertificates): void {
    this.certs = certs;
    this.server?.setCertificate(certs.serving.certPem, certs.serving.keyPem);
    void this.publishCa();
  }

  /** Start the caches and the listener (after certificates()); resolves with the port. */
  async start(): Promise<number> {
    if (!this.certs) throw new Error('the pull-credentials endpoint has no certificate yet');
    this.nodeImages.start();
    this.secrets.start();
    this.server = new PullCredentialsServer({
      certPem: this.certs.serving.certPem,
      keyPem: this.certs.serving.keyPem,
      identities: this.identities,
      lookup: {
        nodeImage: (node) => this.nodeImages.get(node),
        secret: (name) => this.secrets.get(`${KRUISE_DAEMON_CONFIG_NAMESPACE}/${name}`),
      },
      notReady: () => this.notReady(),
      logger: this.o.logger,
    });
    const port = await this.server.listen(this.o.host, this.o.port);
    this.o.logger.info({ port }, 'pull credentials serving');
    return port;
  }

  /** Readiness: why answers cannot be given yet. */
  notReady(): string | undefined {
    const n = this.nodeImages.notSyncedReason();
    if (n !== undefined) return `the NodeImage cache ${n}`;
    const s = this.secrets.notSyncedReason();
    if (s !== undefined) return `the ${KRUISE_DAEMON_CONFIG_NAMESPACE} secret cache ${s}`;
    return undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.caTimer) clearTimeout(this.caTimer);
    await this.server?.close();
    await Promise.all([this.nodeImages.stop(), this.secrets.stop()]);
  }

  /** Write the CA into the ConfigMap (create or update), retried until it is there. */
  private async publishCa(): Promise<void> {
    const ca = this.certs?.ca.certPem;
    if (this.stopped || ca === undefined || ca === this.publishedCa) return;
    if (this.caTimer) clearTimeout(this.caTimer);
    try {
      const { object } = await updateFromFresh<ConfigMapObject>(
        this.o.client,
        CoreResources.configMaps,
        CONTROLLER_CA_CONFIGMAP,
        KRUISE_DAEMON_CONFIG_NAMESPACE,
        (draft) => {
          if (draft.data?.[CONTROLLER_CA_KEY] === ca) return false;
          draft.data = { ...draft.data, [CONTROLLER_CA_KEY]: ca };
          return true;
        },
      );
      if (!object) {
        await this.o.client
          .create<ConfigMapObject>(
            CoreResources.configMaps,
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: {
                name: CONTROLLER_CA_CONFIGMAP,
                namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
                labels: { 'app.kubernetes.io/part-of': 'kruise-daemon' },
              },
              data: { [CONTROLLER_CA_KEY]: ca },
            },
            { namespace: KRUISE_DAEMON_CONFIG_NAMESPACE },
          )
          .catch((err: unknown) => {
            if (!isAlreadyExists(err)) throw err;
            throw new Error('created by another replica meanwhile; checking again');
          });
      }
      this.publishedCa = ca;
      this.o.logger.info(
        { configMap: `${KRUISE_DAEMON_CONFIG_NAMESPACE}/${CONTROLLER_CA_CONFIGMAP}` },
        'controller CA published',
      );
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err) }, 'publishing the controller CA failed; retrying');
      this.caTimer = setTimeout(() => void this.publishCa(), CA_RETRY_MS);
      this.caTimer.unref();
    }
  }
}
