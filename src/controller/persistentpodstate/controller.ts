// persistentpodstate controller: keeps each PersistentPodState's status.podStates (where each Ready pod of its
// StatefulSet runs, see pod-states.ts) and generates PersistentPodStates from StatefulSet annotations
// (generation.ts). One queue, two kinds of keys: `pps/<ns>/<name>` (status) and `sts/<ns>/<name>` (generation).
// Events routed (reference §4.3, without its quirks): a pod of a StatefulSet becoming Ready, moving node, starting
// deletion or going → its PPS; a StatefulSet's size, ordinals, uid or deletion → its PPS (looked up by API group, so
// a native StatefulSet's delete is not missed); its generation annotations → its generate key; a generated PPS
// edited or deleted → its StatefulSet's generate key (restored). PPS deletion with the StatefulSet: ownerReference GC.
import { formatFieldErrors } from '../../api/field-errors.js';
import { groupOf, isSupportedTarget, validatePersistentPodState } from '../../api/persistentpodstate-validation.js';
import { isAlreadyExists, ignoreNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer/informer.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { objectKey, type KubeObject, type OwnerReference } from '../../kube/object.js';
import { patchStatus } from '../../kube/status-patch.js';
import type { ReconcileResult } from '../../kube/workqueue/workers.js';
import { ControllerLoop } from '../../kube/controller-loop.js';
import type { ControllerParts } from '../shared/controller-parts.js';
import { OwnWriteExpectations } from '../../kube/own-writes.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import { INJECTED_PERSISTENT_POD_STATE_ANNOTATION } from '../../api/constants.js';
import {
  applyGeneratedSpec,
  controlledBy,
  generatedObject,
  GENERATION_ANNOTATIONS,
  planGeneration,
} from './generation.js';
import { computePodStates, isPodReady } from './pod-states.js';
import { PERSISTENT_POD_STATES, type PersistentPodState } from '../../api/persistentpodstate.js';
import { STATEFULSETS, type StatefulSetObject } from './resources.js';
import type { WirePod, WireNode } from '../../api/wire.js';

/** Index of the PPS cache by target workload: `<namespace>/<group>/<kind>/<name>`. */
export const PPS_TARGET_INDEX = 'ppsTarget';
/** Index of the pod cache by the uid of the pod's controller (ownerReference with controller: true). */
export const POD_CONTROLLER_UID_INDEX = 'controllerUid';

export const EVENT_INVALID_SPEC = 'InvalidPersistentPodState';
export const EVENT_GENERATE_FAILED = 'GeneratePersistentPodStateFailed';
export const EVENT_GENERATED = 'GeneratedPersistentPodState';

const CACHE_WAIT_MS = 100;
const NODE_WAIT_MS = 1000;

export function targetKey(namespace: string, apiVersion: string, kind: string, name: string): string {
  return `${namespace}/${groupOf(apiVersion)}/${kind}/${name}`;
}

export const byTarget = (pps: PersistentPodState): string[] => {
  const ref = pps.spec?.targetRef;
  const ns = pps.metadata?.namespace;
  return ref && ns ? [targetKey(ns, ref.apiVersion ?? '', ref.kind ?? '', ref.name ?? '')] : [];
};

export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return (obj.metadata?.ownerReferences ?? []).find((r) => r.controller === true);
}

export const byControllerUid = (obj: KubeObject): string[] => {
  const uid = controllerRefOf(obj)?.uid;
  return uid ? [uid] : [];
};

export interface PersistentPodStateControllerOptions extends ControllerParts {
  persistentPodStates: Informer<PersistentPodState>;
  statefulSets: Informer<StatefulSetObject>;
  /** All pods, with the POD_CONTROLLER_UID_INDEX index. */
  pods: Informer<WirePod>;
  nodes: Informer<WireNode>;
}

const PPS_PREFIX = 'pps/';
const STS_PREFIX = 'sts/';

export class PersistentPodStateController {
  private readonly loop: ControllerLoop;
  private readonly expectations: OwnWriteExpectations;
  /** PPS key → generation already reported invalid (one event per spec change, not per reconcile). */
  private readonly reportedInvalid = new Map<string, number>();

  constructor(private readonly o: PersistentPodStateControllerOptions) {
    this.expectations = new OwnWriteExpectations(o.clock);
    this.loop = new ControllerLoop('persistentpodstate', o, (key) => this.reconcile(key));
  }

  start(): void {
    const { persistentPodStates, statefulSets, pods } = this.o;
    this.loop.watch(
      this.expectations.follow(persistentPodStates, objectKey),
      persistentPodStates.addHandlers({
        onAdd: (pps) => this.loop.add(PPS_PREFIX + objectKey(pps)),
        onUpdate: (_, pps) => {
          this.loop.add(PPS_PREFIX + objectKey(pps));
          this.enqueueGenerator(pps);
        },
        onDelete: (pps) => {
          this.reportedInvalid.delete(objectKey(pps));
          this.enqueueGenerator(pps);
        },
      }),
      statefulSets.addHandlers({
        onAdd: (sts) => {
          this.loop.add(STS_PREFIX + objectKey(sts));
          this.enqueueTargeting(sts);
        },
        onUpdate: (old, sts) => {
          const a = old.metadata?.annotations ?? {};
          const b = sts.metadata?.annotations ?? {};
          if (GENERATION_ANNOTATIONS.some((k) => a[k] !== b[k]) || old.metadata?.uid !== sts.metadata?.uid) {
            this.loop.add(STS_PREFIX + objectKey(sts));
          }
          if (
            !jsonEqual(toJson(old.spec?.replicas), toJson(sts.spec?.replicas)) ||
            !jsonEqual(toJson(old.spec?.ordinals), toJson(sts.spec?.ordinals)) ||
            old.metadata?.uid !== sts.metadata?.uid ||
            !!old.metadata?.deletionTimestamp !== !!sts.metadata?.deletionTimestamp
          ) {
            this.enqueueTargeting(sts);
          }
        },
        onDelete: (sts) => this.enqueueTargeting(sts),
      }),
      pods.addHandlers({
        onAdd: (pod) => {
          if (isPodReady(pod)) this.enqueueForPod(pod);
        },
        onUpdate: (old, pod) => {
          if (old.metadata?.resourceVersion === pod.metadata?.resourceVersion) return;
          if (
            isPodReady(old) !== isPodReady(pod) ||
            old.spec?.nodeName !== pod.spec?.nodeName ||
            (!old.metadata?.deletionTimestamp && !!pod.metadata?.deletionTimestamp) ||
            !jsonEqual(toJson(old.metadata?.annotations), toJson(pod.metadata?.annotations))
          ) {
            this.enqueueForPod(pod);
          }
        },
        onDelete: (pod) => this.enqueueForPod(pod),
      }),
    );
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** The PPSs following a workload (any version of its API group). */
  private targeting(ns: string, apiVersion: string, kind: string, name: string): PersistentPodState[] {
    return this.o.persistentPodStates.store.byIndex(PPS_TARGET_INDEX, targetKey(ns, apiVersion, kind, name));
  }

  private enqueueTargeting(sts: StatefulSetObject): void {
    const ns = sts.metadata?.namespace ?? '';
    for (const pps of this.targeting(ns, 'apps/v1', 'StatefulSet', sts.metadata?.name ?? '')) {
      this.loop.add(PPS_PREFIX + objectKey(pps));
    }
  }

  private enqueueGenerator(pps: PersistentPodState): void {
    const ref = controllerRefOf(pps);
    if (ref && ref.kind === 'StatefulSet' && groupOf(ref.apiVersion) === 'apps' && pps.metadata?.namespace) {
      this.loop.add(`${STS_PREFIX}${pps.metadata.namespace}/${ref.name}`);
    }
  }

  private enqueueForPod(pod: WirePod): void {
    const ns = pod.metadata?.namespace ?? '';
    const injected = pod.metadata?.annotations?.[INJECTED_PERSISTENT_POD_STATE_ANNOTATION];
    if (injected) this.loop.add(`${PPS_PREFIX}${ns}/${injected}`);
    const ref = controllerRefOf(pod);
    if (!ref || ref.kind !== 'StatefulSet' || groupOf(ref.apiVersion) !== 'apps') return;
    for (const pps of this.targeting(ns, ref.apiVersion, ref.kind, ref.name)) {
      if (!pps.metadata?.deletionTimestamp) this.loop.add(PPS_PREFIX + objectKey(pps));
    }
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    if (key.startsWith(PPS_PREFIX)) return this.reconcileStatus(key.slice(PPS_PREFIX.length));
    if (key.startsWith(STS_PREFIX)) return this.reconcileGeneration(key.slice(STS_PREFIX.length));
    this.loop.logger.warn({ key }, 'unknown key ignored');
  }

  private async reconcileStatus(key: string): Promise<ReconcileResult | void> {
    const pps = this.o.persistentPodStates.get(key);
    if (!pps) {
      this.expectations.forget(key);
      this.reportedInvalid.delete(key);
      return;
    }
    if (pps.metadata?.deletionTimestamp) return;
    if (!this.expectations.isFresh(key, pps.metadata?.resourceVersion)) return { requeueAfter: CACHE_WAIT_MS };
    const errors = validatePersistentPodState(pps);
    if (errors.length > 0) {
      const generation = pps.metadata?.generation ?? 0;
      if (this.reportedInvalid.get(key) !== generation) {
        this.reportedInvalid.set(key, generation);
        this.o.events.event(
          pps,
          'Warning',
          EVENT_INVALID_SPEC,
          `not recording pods: ${formatFieldErrors(errors)}`,
          PERSISTENT_POD_STATES,
        );
        this.loop.logger.warn({ pps: key, errors: formatFieldErrors(errors) }, 'invalid PersistentPodState');
      }
      return;
    }
    this.reportedInvalid.delete(key);
    const ref = pps.spec.targetRef;
    const ns = pps.metadata?.namespace ?? '';
    const workload = isSupportedTarget(ref) ? this.o.statefulSets.get(`${ns}/${ref.name}`) : undefined;
    const pods = workload?.metadata?.uid
      ? this.o.pods.store.byIndex(POD_CONTROLLER_UID_INDEX, workload.metadata.uid)
      : [];
    const { status, waitingForNodes } = computePodStates({
      pps,
      workload,
      pods,
      podExists: (name) => this.o.pods.store.has(`${ns}/${name}`),
      node: (name) => this.o.nodes.get(name),
    });
    if (!jsonEqual(toJson(pps.status ?? {}), toJson(status))) {
      const result = await patchStatus(this.o.client, PERSISTENT_POD_STATES, pps, () => status);
      if (result.patched) {
        this.expectations.expect(key, result.object.metadata?.resourceVersion);
        this.loop.logger.debug({ pps: key, pods: Object.keys(status.podStates ?? {}).length }, 'pod states written');
      }
    }
    if (waitingForNodes.length > 0) return { requeueAfter: NODE_WAIT_MS };
  }

  private async reconcileGeneration(key: string): Promise<ReconcileResult | void> {
    const sts = this.o.statefulSets.get(key);
    if (!sts || sts.metadata?.deletionTimestamp) return; // its generated PPS goes by ownerReference GC
    const existing = this.o.persistentPodStates.get(key);
    if (!this.expectations.isFresh(key, existing?.metadata?.resourceVersion)) return { requeueAfter: CACHE_WAIT_MS };
    const plan = planGeneration(sts);
    const ns = sts.metadata?.namespace ?? '';
    const name = sts.metadata?.name ?? '';
    const uid = sts.metadata?.uid;
    if (plan.kind === 'invalid') {
      this.o.events.event(sts, 'Warning', EVENT_GENERATE_FAILED, plan.message, STATEFULSETS);
      return;
    }
    if (plan.kind === 'remove') {
      if (!existing || !controlledBy(existing, uid) || existing.metadata?.deletionTimestamp) return;
      await this.o.client
        .delete(PERSISTENT_POD_STATES, name, { namespace: ns, preconditions: { uid: existing.metadata?.uid } })
        .catch(ignoreNotFound);
      this.loop.logger.info({ pps: key }, 'generated PersistentPodState deleted (auto-generation turned off)');
      return;
    }
    if (existing && !controlledBy(existing, uid)) {
      this.o.events.event(
        sts,
        'Warning',
        EVENT_GENERATE_FAILED,
        `PersistentPodState ${name} exists and is not controlled by this StatefulSet; it is left as it is`,
        STATEFULSETS,
      );
      return;
    }
    if (!existing) {
      try {
        const created = await this.o.client.create<PersistentPodState>(
          PERSISTENT_POD_STATES,
          generatedObject(sts, plan),
          { namespace: ns },
        );
        this.expectations.expect(key, created.metadata?.resourceVersion);
        this.o.events.event(sts, 'Normal', EVENT_GENERATED, `created PersistentPodState ${name}`, STATEFULSETS);
        this.loop.logger.info({ pps: key }, 'PersistentPodState generated');
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        return { requeueAfter: CACHE_WAIT_MS }; // created meanwhile: look again once the cache has it
      }
      return;
    }
    const { written, object } = await updateFromFresh<PersistentPodState>(
      this.o.client,
      PERSISTENT_POD_STATES,
      name,
      ns,
      (draft) => controlledBy(draft, uid) && !draft.metadata?.deletionTimestamp && applyGeneratedSpec(draft, plan.spec),
    );
    if (written) {
      this.expectations.expect(key, object?.metadata?.resourceVersion);
      this.loop.logger.info({ pps: key }, 'generated PersistentPodState updated from the StatefulSet annotations');
    }
  }
}

function toJson(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}
