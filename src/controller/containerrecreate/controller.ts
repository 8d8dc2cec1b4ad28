// CRR housekeeping in the central controller (OpenKruise's manager-side CRR controller, reference §1.4): once a CRR
// is completed it releases the pod's not-ready hold and the finalizer, removes the active label (the agents stop
// watching it) and deletes it after ttlSecondsAfterFinished; before that it completes CRRs whose pod has gone,
// that no agent picked up within a minute, or that ran past activeDeadlineSeconds; and for unreadyGracePeriodSeconds
// it holds the pod not-ready through the KruisePodReady readiness gate and stamps the unready-acquired time the
// agent waits on. Readiness of the new containers is read by the agent from the pod itself, so no status
// snapshot is written here.
import { CRR_ACTIVE_LABEL, CRR_POD_UID_LABEL, CRR_UNREADY_ACQUIRED_KEY } from '../../api/constants.js';
import {
  CONTAINER_RECREATE_REQUESTS,
  crrFinished,
  type ContainerRecreateRequest,
} from '../../api/containerrecreaterequest.js';
import type { WirePod } from '../../api/wire.js';
import {
  byLabel,
  ControllerLoop,
  CoreResources,
  Informer,
  isNotFound,
  patchStatus,
  type KubeClient,
  type KubeMetrics,
  type KubeObject,
  type ReconcileMetrics,
  type ReconcileResult,
} from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock } from '../../util/clock.js';
import { addNotReadyKey, CRR_USER_AGENT, hasKruisePodReadyGate, removeNotReadyKey } from './pod-readiness.js';
import { rfc3339 } from '../../util/time.js';

export const CRR_POD_UID_INDEX = 'crrPodUid';
/** An agent that has not set a phase within this long is taken as absent (OpenKruise's responseTimeout). */
export const RESPONSE_TIMEOUT_MS = 60_000;

export const MESSAGE_POD_GONE = 'pod has gone';
export const MESSAGE_NO_RESPONSE = 'daemon has not responded for a long time';
export const MESSAGE_DEADLINE = 'recreating has exceeded the activeDeadlineSeconds';

/** The CRR informer the housekeeper needs (all namespaces, indexed by the pod-uid label). */
export function newCrrInformer(
  client: KubeClient,
  options: { clock: Clock; logger: Logger; metrics?: KubeMetrics | undefined },
): Informer<ContainerRecreateRequest> {
  return new Informer<ContainerRecreateRequest>(CONTAINER_RECREATE_REQUESTS, client, {
    name: CONTAINER_RECREATE_REQUESTS.resource,
    clock: options.clock,
    logger: options.logger,
    metrics: options.metrics,
    indexers: { [CRR_POD_UID_INDEX]: byLabel(CRR_POD_UID_LABEL) },
  });
}

export interface CrrHousekeeperOptions {
  client: KubeClient;
  crrs: Informer<ContainerRecreateRequest>;
  /** Pods (all namespaces); looked up by "namespace/name". */
  pods: Informer<WirePod>;
  clock: Clock;
  logger: Logger;
  /** Counts and times the reconciles (kruise_controller_reconcile*, controller="crr"). */
  metrics?: ReconcileMetrics | undefined;
  kubeMetrics?: KubeMetrics | undefined;
  workers?: number | undefined;
  responseTimeoutMs?: number | undefined;
}

export class CrrHousekeeper {
  private readonly loop: ControllerLoop;
  private removeHandlers: Array<() => void> = [];

  constructor(private readonly options: CrrHousekeeperOptions) {
    this.loop = new ControllerLoop(
      'crr',
      {
        workers: options.workers ?? 3,
        clock: options.clock,
        logger: options.logger,
        metrics: options.metrics,
        kubeMetrics: options.kubeMetrics,
      },
      (key) => this.reconcile(key),
    );
  }

  /** Add the handlers and run the workers (call once the caches synced). */
  start(): void {
    const { crrs, pods } = this.options;
    const key = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    this.removeHandlers.push(
      crrs.addHandlers({ onAdd: (c) => this.loop.add(key(c)), onUpdate: (_, c) => this.loop.add(key(c)) }),
    );
    const onPod = (pod: WirePod): void => {
      const uid = pod.metadata?.uid;
      if (!uid) return;
      for (const crr of crrs.store.byIndex(CRR_POD_UID_INDEX, uid)) {
        if (!crr.metadata?.deletionTimestamp && !crr.status?.completionTime) this.loop.add(key(crr));
      }
    };
    this.removeHandlers.push(
      pods.addHandlers({
        onUpdate: (old, pod) => {
          if (
            (!old.metadata?.deletionTimestamp && pod.metadata?.deletionTimestamp) ||
            JSON.stringify(old.status?.containerStatuses) !== JSON.stringify(pod.status?.containerStatuses) ||
            JSON.stringify(old.status?.initContainerStatuses) !== JSON.stringify(pod.status?.initContainerStatuses)
          ) {
            onPod(pod);
          }
        },
        onDelete: onPod,
      }),
    );
    this.loop.start();
  }

  async stop(): Promise<void> {
    for (const remove of this.removeHandlers) remove();
    await this.loop.stop();
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const { crrs, pods, client, clock, logger } = this.options;
    const crr = crrs.get(key);
    if (!crr) return;
    const ns = crr.metadata?.namespace ?? '';
    const pod = pods.get(`${ns}/${crr.spec?.podName ?? ''}`);
    const now = clock.now();
    const log = logger.child({ crr: key });

    if (crr.metadata?.deletionTimestamp || crr.status?.completionTime) {
      if (crr.metadata?.finalizers?.includes(CRR_UNREADY_ACQUIRED_KEY)) {
        await this.releasePodNotReady(crr, pod);
        return;
      }
      if (crr.metadata?.deletionTimestamp) return;
      if (crr.metadata?.labels?.[CRR_ACTIVE_LABEL] !== undefined) {
        await client.patch(
          CONTAINER_RECREATE_REQUESTS,
          crr.metadata.name!,
          { metadata: { labels: { [CRR_ACTIVE_LABEL]: null } } },
          {
            type: 'merge',
            namespace: ns,
          },
        );
        return;
      }
      const ttl = crr.spec?.ttlSecondsAfterFinished;
      if (ttl === undefined || ttl === null) return;
      const left = ttl * 1000 - (now - (Date.parse(crr.status!.completionTime!) || now));
      if (left > 0) return { requeueAfter: left };
      log.info({ ttlSecondsAfterFinished: ttl }, 'deleting finished ContainerRecreateRequest');
      try {
        await client.delete(CONTAINER_RECREATE_REQUESTS, crr.metadata.name!, { namespace: ns });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }

    if (!pod || pod.metadata?.deletionTimestamp || pod.metadata?.uid !== crr.metadata?.labels?.[CRR_POD_UID_LABEL]) {
      await this.complete(crr, MESSAGE_POD_GONE);
      return;
    }

    const created = Date.parse(crr.metadata?.creationTimestamp ?? '') || now;
    let wait = Number.POSITIVE_INFINITY;
    if (!crr.status?.phase) {
      const left = (this.options.responseTimeoutMs ?? RESPONSE_TIMEOUT_MS) - (now - created);
      if (left <= 0) {
        await this.complete(crr, MESSAGE_NO_RESPONSE);
        return;
      }
      wait = Math.min(wait, left);
    }
    const deadline = crr.spec?.activeDeadlineSeconds;
    if (deadline !== undefined && deadline !== null) {
      const left = deadline * 1000 - (now - created);
      if (left <= 0) {
        await this.complete(crr, MESSAGE_DEADLINE);
        return;
      }
      wait = Math.min(wait, left);
    }
    if (
      crr.status?.phase === 'Recreating' &&
      crr.spec?.strategy?.unreadyGracePeriodSeconds !== undefined &&
      crr.spec.strategy.unreadyGracePeriodSeconds !== null &&
      !crr.metadata?.annotations?.[CRR_UNREADY_ACQUIRED_KEY]
    ) {
      await this.acquirePodNotReady(crr, pod);
    }
    return Number.isFinite(wait) ? { requeueAfter: Math.max(1, wait) } : undefined;
  }

  private async complete(crr: ContainerRecreateRequest, message: string): Promise<void> {
    this.options.logger.info(
      { crr: `${crr.metadata?.namespace}/${crr.metadata?.name}`, message },
      'completing ContainerRecreateRequest',
    );
    // conditional on the CRR read; after a conflict, a CRR the agent finished meanwhile is left as it is
    await patchStatus(this.options.client, CONTAINER_RECREATE_REQUESTS, crr, (draft) => {
      if (crrFinished(draft.status)) return;
      draft.status = {
        ...(draft.status ?? { phase: '' }),
        phase: 'Completed',
        completionTime: rfc3339(this.options.clock.now()),
        message,
      };
    });
  }

  /** Finalizer first (so the hold is always released), then the pod's not-ready key, then the acquired time. */
  private async acquirePodNotReady(crr: ContainerRecreateRequest, pod: WirePod): Promise<void> {
    const { client, clock } = this.options;
    const ns = crr.metadata?.namespace ?? '';
    const name = crr.metadata.name!;
    if (hasKruisePodReadyGate(pod)) {
      if (!crr.metadata?.finalizers?.includes(CRR_UNREADY_ACQUIRED_KEY)) {
        await client.patch(
          CONTAINER_RECREATE_REQUESTS,
          name,
          {
            metadata: {
              finalizers: [...(crr.metadata?.finalizers ?? []), CRR_UNREADY_ACQUIRED_KEY],
              resourceVersion: crr.metadata?.resourceVersion,
            },
          },
          { type: 'merge', namespace: ns },
        );
      }
      await this.changeNotReadyKey(pod, `${ns}/${name}`, addNotReadyKey);
    } else {
      this.options.logger.info(
        { crr: `${ns}/${name}` },
        'pod has no KruisePodReady readiness gate: could not set it not-ready',
      );
    }
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      name,
      { metadata: { annotations: { [CRR_UNREADY_ACQUIRED_KEY]: rfc3339(clock.now()) } } },
      {
        type: 'merge',
        namespace: ns,
      },
    );
  }

  private async releasePodNotReady(crr: ContainerRecreateRequest, pod: WirePod | undefined): Promise<void> {
    const { client } = this.options;
    const ns = crr.metadata?.namespace ?? '';
    const name = crr.metadata.name!;
    if (pod) {
      await this.changeNotReadyKey(pod, `${ns}/${name}`, removeNotReadyKey);
    }
    await client.patch(
      CONTAINER_RECREATE_REQUESTS,
      name,
      {
        metadata: {
          finalizers: (crr.metadata?.finalizers ?? []).filter((f) => f !== CRR_UNREADY_ACQUIRED_KEY),
          resourceVersion: crr.metadata?.resourceVersion,
        },
      },
      { type: 'merge', namespace: ns },
    );
  }

  /** Add or remove this CRR's key in the pod's KruisePodReady condition (a status patch conditional on the read). */
  private async changeNotReadyKey(
    pod: WirePod,
    key: string,
    change: typeof addNotReadyKey | typeof removeNotReadyKey,
  ): Promise<void> {
    const { client, clock } = this.options;
    await patchStatus(client, CoreResources.pods, pod, (draft) => {
      const conditions = change(draft, { userAgent: CRR_USER_AGENT, key }, rfc3339(clock.now()));
      if (conditions) draft.status = { ...(draft.status ?? {}), conditions };
    });
  }
}
