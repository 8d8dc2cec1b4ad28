// podprobemarker controller: writes each PodProbeMarker's probes into the NodePodProbes of the nodes its pods run
// on (node-probes.ts), for the pods of its namespace it selects that are active, scheduled and Initialized; pods on
// virtual-kubelet nodes are counted but get no entry (no agent runs there); entries of pods it no longer selects are
// removed. One NodePodProbe write per node per reconcile at most, none when nothing changes, from the cache with its
// resourceVersion (a conflict redoes the merge on a fresh read). A finalizer keeps a deleted marker until its probes
// have left every NodePodProbe and its marks left its pods (marker-cleanup.ts). Status: observedGeneration and
// matchedPods, written only when they change. A probe a pod cannot run (no such container, no such named port) is
// left out for that pod and reported as a Warning event on the marker. A node's NodePodProbe holds at most its budget
// (node-budget.ts): a marker whose probes do not fit there is left out of that node whole, with a Warning event
// (ProbesLeftOut) and the ProbesLeftOut condition on it naming the nodes; the other markers' probes still go there.
// Keyed `<namespace>/<name>`.
import { isPodActive } from '../../api/pod-active.js';
import { NODE_POD_PROBE_CLEANUP_FINALIZER } from '../../api/constants.js';
import { formatFieldErrors } from '../../api/field-errors.js';
import { labelSelectorMatches } from '../../api/label-selector.js';
import type { NodePodProbe, PodProbe } from '../../api/nodepodprobe.js';
import { POD_PROBE_MARKERS, type PodProbeMarker, type PodProbeMarkerStatus } from '../../api/podprobemarker.js';
import { validatePodProbeMarker } from '../../api/podprobemarker-validation.js';
import type { WireNode, WirePod } from '../../api/wire.js';
import { ControllerLoop } from '../../kube/controller-loop.js';
import { NAMESPACE_INDEX } from '../../kube/informer/store.js';
import { updateFromFresh } from '../../kube/fresh-update.js';
import type { Informer } from '../../kube/informer/informer.js';
import { jsonEqual } from '../../kube/merge-patch.js';
import { objectKey, splitKey } from '../../kube/object.js';
import { OwnWriteExpectations } from '../../kube/own-writes.js';
import { patchStatus } from '../../kube/status-patch.js';
import type { ReconcileResult } from '../../kube/workqueue/workers.js';
import type { ControllerParts } from '../shared/controller-parts.js';
import { writeNodePodProbeSpec } from '../shared/node-pod-probe-write.js';
import { patchPodConditions, patchPodMetadata } from '../shared/pod-marks-write.js';
import { isVirtualKubelet, markerNameOf, NPP_MARKER_INDEX, POD_NODE_INDEX } from '../shared/pod-probes.js';
import { cleanupPatchFor, conditionsWithout } from './marker-cleanup.js';
import {
  isProbedPod,
  mergeMarkerProbes,
  podProbesFor,
  removeMarkers,
  summarizeProblems,
  type ProbeProblem,
} from './node-probes.js';
import {
  fitMarkers,
  leftOutConditions,
  leftOutMessage,
  SPEC_BUDGET_BYTES,
  type BudgetDecision,
  type MarkerShare,
  type NodeLeftOut,
} from './node-budget.js';
import { rfc3339 } from '../../util/time.js';

export const EVENT_INVALID_MARKER = 'InvalidPodProbeMarker';
export const EVENT_PROBE_NOT_APPLIED = 'ProbeNotApplied';
export const EVENT_PROBES_LEFT_OUT = 'ProbesLeftOut';

const CACHE_WAIT_MS = 100;
/** NodePodProbe writes in flight at once for one reconcile. */
const NODE_WRITE_CONCURRENCY = 8;

export interface PodProbeMarkerControllerOptions extends ControllerParts {
  /** With the NAMESPACE_INDEX index. */
  podProbeMarkers: Informer<PodProbeMarker>;
  /** All pods, with the NAMESPACE_INDEX and POD_NODE_INDEX indexes. */
  pods: Informer<WirePod>;
  nodes: Informer<WireNode>;
  /** With the NPP_MARKER_INDEX index. */
  nodePodProbes: Informer<NodePodProbe>;
  /** Bytes of JSON one NodePodProbe spec may hold (default SPEC_BUDGET_BYTES). */
  nodePodProbeBudgetBytes?: number | undefined;
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Pod changes that can change what a marker writes for it. */
function podChangeMatters(old: WirePod, pod: WirePod): boolean {
  const initialized = (p: WirePod): boolean =>
    (p.status?.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  return (
    old.metadata?.uid !== pod.metadata?.uid ||
    old.spec?.nodeName !== pod.spec?.nodeName ||
    old.status?.podIP !== pod.status?.podIP ||
    isPodActive(old) !== isPodActive(pod) ||
    initialized(old) !== initialized(pod) ||
    !jsonEqual(old.metadata?.labels ?? {}, pod.metadata?.labels ?? {})
  );
}

async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(work));
}

export class PodProbeMarkerController {
  private readonly loop: ControllerLoop;
  private readonly expectations: OwnWriteExpectations;
  private readonly nodeWrites: OwnWriteExpectations;
  /** Marker key → the last event sent about it (one event per distinct problem, not one per reconcile). */
  private readonly reported = new Map<string, string>();
  /** Marker key → the nodes it was last reported left out of (one event per change of that list). */
  private readonly reportedLeftOut = new Map<string, string>();
  /** Node → the markers its budget left out at its last look (a change enqueues the markers it moved). */
  private readonly leftOutOn = new Map<string, Set<string>>();
  /** Node → the markers its measured spec had no room for (another writer's entries); retried after a write there. */
  private readonly overflowOn = new Map<string, Set<string>>();
  private readonly budget: number;

  constructor(private readonly o: PodProbeMarkerControllerOptions) {
    this.budget = o.nodePodProbeBudgetBytes ?? SPEC_BUDGET_BYTES;
    this.expectations = new OwnWriteExpectations(o.clock);
    this.nodeWrites = new OwnWriteExpectations(o.clock);
    this.loop = new ControllerLoop('podprobemarker', o, (key) => this.reconcile(key));
  }

  start(): void {
    const { podProbeMarkers, pods, nodePodProbes, nodes } = this.o;
    this.loop.watch(
      this.expectations.follow(podProbeMarkers, objectKey),
      this.nodeWrites.follow(nodePodProbes, (npp) => npp.metadata.name ?? ''),
      podProbeMarkers.addHandlers({
        onAdd: (marker) => this.loop.add(objectKey(marker)),
        onUpdate: (old, marker) => {
          if (
            old.metadata.generation !== marker.metadata.generation ||
            !!old.metadata.deletionTimestamp !== !!marker.metadata.deletionTimestamp ||
            !jsonEqual(old.metadata.finalizers ?? [], marker.metadata.finalizers ?? [])
          ) {
            this.loop.add(objectKey(marker));
          }
        },
        onDelete: (marker) => this.loop.add(objectKey(marker)),
      }),
      pods.addHandlers({
        onAdd: (pod) => {
          if (pod.spec?.nodeName) this.enqueueSelecting(pod);
        },
        onUpdate: (old, pod) => {
          if (!podChangeMatters(old, pod)) return;
          this.enqueueSelecting(old);
          this.enqueueSelecting(pod);
        },
        onDelete: (pod) => this.enqueueSelecting(pod),
      }),
      // pods whose node had no NodePodProbe yet (or a virtual-kubelet node that became a real one)
      nodePodProbes.addHandlers({ onAdd: (npp) => this.enqueueForNode(npp.metadata.name ?? '') }),
      nodes.addHandlers({
        onUpdate: (old, node) => {
          if (isVirtualKubelet(old) !== isVirtualKubelet(node)) this.enqueueForNode(node.metadata?.name ?? '');
        },
      }),
    );
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** The markers whose selector matches the pod's labels. */
  private enqueueSelecting(pod: WirePod, seen?: Set<string>): void {
    const namespace = pod.metadata?.namespace;
    if (!namespace) return;
    for (const marker of this.o.podProbeMarkers.store.byIndex(NAMESPACE_INDEX, namespace)) {
      if (!labelSelectorMatches(marker.spec.selector ?? {}, pod.metadata?.labels ?? {})) continue;
      const key = objectKey(marker);
      if (seen?.has(key)) continue;
      seen?.add(key);
      this.loop.add(key);
    }
  }

  private enqueueForNode(node: string): void {
    if (!node) return;
    const seen = new Set<string>();
    for (const pod of this.o.pods.store.byIndex(POD_NODE_INDEX, node)) this.enqueueSelecting(pod, seen);
  }

  async reconcile(key: string): Promise<ReconcileResult | void> {
    const marker = this.o.podProbeMarkers.get(key);
    const { namespace = '', name } = splitKey(key);
    if (!marker) {
      // deleted without our finalizer (force-removed, or before we added it): take its probes back all the same
      this.expectations.forget(key);
      this.reported.delete(key);
      this.reportedLeftOut.delete(key);
      await this.removeFromNodes(namespace, name);
      return;
    }
    if (!this.expectations.isFresh(key, marker.metadata.resourceVersion)) return { requeueAfter: CACHE_WAIT_MS };
    if (marker.metadata.deletionTimestamp) return this.finalize(key, marker);

    const errors = validatePodProbeMarker(marker, { sizeLimits: false });
    if (errors.length > 0) {
      this.report(marker, EVENT_INVALID_MARKER, `probes not applied: ${formatFieldErrors(errors)}`);
      return;
    }
    if (!(marker.metadata.finalizers ?? []).includes(NODE_POD_PROBE_CLEANUP_FINALIZER)) {
      const { object, written } = await updateFromFresh<PodProbeMarker>(
        this.o.client,
        POD_PROBE_MARKERS,
        name,
        namespace,
        (draft) => {
          if (draft.metadata.deletionTimestamp || draft.metadata.finalizers?.includes(NODE_POD_PROBE_CLEANUP_FINALIZER))
            return false;
          (draft.metadata.finalizers ??= []).push(NODE_POD_PROBE_CLEANUP_FINALIZER);
          return true;
        },
      );
      if (written) this.expectations.expect(key, object?.metadata.resourceVersion);
      return; // the update brings us back with the finalizer in the cache
    }

    const wanted = new Map<string, Map<string, PodProbe>>();
    const problems: ProbeProblem[] = [];
    let matched = 0;
    for (const pod of this.o.pods.store.byIndex(NAMESPACE_INDEX, namespace)) {
      if (!isProbedPod(marker, pod)) continue;
      const nodeName = pod.spec?.nodeName ?? '';
      const node = this.o.nodes.get(nodeName);
      if (!node) continue; // as OpenKruise: a pod on a node that is gone is not counted
      matched++;
      if (isVirtualKubelet(node)) continue;
      const { entry, problems: podProblems } = podProbesFor(marker, pod);
      problems.push(...podProblems);
      let onNode = wanted.get(nodeName);
      if (!onNode) wanted.set(nodeName, (onNode = new Map<string, PodProbe>()));
      onNode.set(entry.uid, entry);
    }
    const leftOut: NodeLeftOut[] = [];
    const evict = new Map<string, ReadonlySet<string>>();
    for (const nodeName of [...wanted.keys()].sort()) {
      const decision = this.nodeBudget(nodeName);
      this.followBudget(nodeName, key, decision);
      evict.set(nodeName, new Set(decision.leftOut.keys()));
      const out = decision.leftOut.get(key);
      if (!out) continue;
      leftOut.push({ node: nodeName, ...out });
      wanted.set(nodeName, new Map()); // none of its probes there
    }
    await this.writeNodes(namespace, name, wanted, leftOut, evict);
    this.reportLeftOut(marker, leftOut);
    if (problems.length > 0) {
      const { key: what, message } = summarizeProblems(problems);
      this.report(marker, EVENT_PROBE_NOT_APPLIED, message, what);
    } else this.reported.delete(key);

    const generation = marker.metadata.generation ?? 0;
    const now = rfc3339(this.o.clock.now());
    const conditions = leftOutConditions(marker.status?.conditions, leftOut, now, this.budget);
    if (
      marker.status?.observedGeneration !== generation ||
      (marker.status.matchedPods ?? 0) !== matched ||
      conditions
    ) {
      const result = await patchStatus(this.o.client, POD_PROBE_MARKERS, marker, (draft) => {
        const status: PodProbeMarkerStatus = { ...draft.status, observedGeneration: generation, matchedPods: matched };
        const fresh = leftOutConditions(draft.status?.conditions, leftOut, now, this.budget);
        if (fresh) status.conditions = fresh;
        return status;
      });
      if (result.patched) this.expectations.expect(key, result.object.metadata.resourceVersion);
    }
  }

  /** One Warning event per distinct problem (`what`, by default the message), not one per reconcile. */
  private report(marker: PodProbeMarker, reason: string, message: string, what = message): void {
    const key = objectKey(marker);
    if (this.reported.get(key) === `${reason}:${what}`) return;
    this.reported.set(key, `${reason}:${what}`);
    this.o.events.event(marker, 'Warning', reason, message, POD_PROBE_MARKERS);
    this.loop.logger.warn({ podProbeMarker: key, reason }, message);
  }

  /** The shares of every marker with probes for pods on the node, and which of them its budget leaves out. */
  private nodeBudget(nodeName: string): BudgetDecision {
    const shares = new Map<string, MarkerShare>();
    const valid = new Map<string, boolean>();
    for (const pod of this.o.pods.store.byIndex(POD_NODE_INDEX, nodeName)) {
      for (const marker of this.o.podProbeMarkers.store.byIndex(NAMESPACE_INDEX, pod.metadata?.namespace ?? '')) {
        if (marker.metadata.deletionTimestamp || !isProbedPod(marker, pod)) continue;
        const key = objectKey(marker);
        let ok = valid.get(key);
        if (ok === undefined) valid.set(key, (ok = validatePodProbeMarker(marker, { sizeLimits: false }).length === 0));
        if (!ok) continue;
        const { entry } = podProbesFor(marker, pod);
        if ((entry.probes ?? []).length === 0) continue;
        const share = shares.get(key) ?? { key, createdAt: marker.metadata.creationTimestamp ?? '', bytes: 0 };
        share.bytes += jsonBytes(entry) + 1; // and the comma
        shares.set(key, share);
      }
    }
    return fitMarkers([...shares.values()], this.budget);
  }

  /** Enqueue the other markers whose place on the node the decision changed (left out now, or no longer). */
  private followBudget(nodeName: string, self: string, decision: BudgetDecision): void {
    const before = this.leftOutOn.get(nodeName) ?? new Set<string>();
    const now = new Set(decision.leftOut.keys());
    for (const key of [...before, ...now]) {
      if (key !== self && before.has(key) !== now.has(key)) this.loop.add(key);
    }
    if (now.size > 0) this.leftOutOn.set(nodeName, now);
    else this.leftOutOn.delete(nodeName);
  }

  /** One Warning event per change of the nodes the marker is left out of; none while it fits everywhere. */
  private reportLeftOut(marker: PodProbeMarker, leftOut: readonly NodeLeftOut[]): void {
    const key = objectKey(marker);
    const nodes = leftOut
      .map((n) => n.node)
      .sort()
      .join(',');
    if (nodes === '') {
      this.reportedLeftOut.delete(key);
      return;
    }
    if (this.reportedLeftOut.get(key) === nodes) return;
    this.reportedLeftOut.set(key, nodes);
    const message = leftOutMessage(leftOut, this.budget);
    this.o.events.event(marker, 'Warning', EVENT_PROBES_LEFT_OUT, message, POD_PROBE_MARKERS);
    this.loop.logger.warn({ podProbeMarker: key, nodes: leftOut.length }, message);
  }

  /**
   * Make the marker's probes on every node it touches (wanted, or holding some of its probes) what `wanted` says.
   * A node whose spec would still pass the budget with them (entries the budget does not count: another writer's)
   * gets none of them, and is added to `leftOut`. `evict` names, by node, the markers the budget leaves out there:
   * their probes go with this write too (their own reconcile reports it), so the kept ones are measured without them.
   */
  private async writeNodes(
    namespace: string,
    name: string,
    wanted: Map<string, Map<string, PodProbe>>,
    leftOut: NodeLeftOut[] = [],
    evict: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
  ): Promise<void> {
    const nodes = new Set(wanted.keys());
    for (const npp of this.o.nodePodProbes.store.byIndex(NPP_MARKER_INDEX, `${namespace}/${name}`)) {
      nodes.add(npp.metadata.name ?? '');
    }
    const none = new Map<string, PodProbe>();
    await inBatches([...nodes].sort(), NODE_WRITE_CONCURRENCY, async (node) => {
      const npp = this.o.nodePodProbes.get(node);
      if (!npp || npp.metadata.deletionTimestamp) return; // created by the nodepodprobe controller; its add brings us back
      const onNode = wanted.get(node) ?? none;
      const fresh = this.nodeWrites.isFresh(node, npp.metadata.resourceVersion);
      let overflow: NodeLeftOut | undefined;
      const result = await writeNodePodProbeSpec(this.o.client, this.o.clock, npp, fresh, (draft) => {
        overflow = undefined;
        const evicted = removeMarkers((draft.spec ??= {}), evict.get(node));
        if (onNode.size > 0) {
          const trial = structuredClone(draft.spec ?? {});
          mergeMarkerProbes(trial, namespace, name, onNode);
          const size = jsonBytes(trial);
          if (size > this.budget) {
            const share = [...onNode.values()].reduce((n, entry) => n + jsonBytes(entry) + 1, 0);
            overflow = { node, bytes: share, free: this.budget - (size - share) };
            return mergeMarkerProbes((draft.spec ??= {}), namespace, name, none) || evicted;
          }
        }
        return mergeMarkerProbes((draft.spec ??= {}), namespace, name, onNode) || evicted;
      });
      const self = `${namespace}/${name}`;
      const waiting = this.overflowOn.get(node) ?? new Set<string>();
      if (overflow) {
        leftOut.push(overflow);
        this.overflowOn.set(node, waiting.add(self));
      } else {
        waiting.delete(self);
        if (result.written) for (const other of waiting) this.loop.add(other);
        if (waiting.size === 0) this.overflowOn.delete(node);
      }
      if (result.conflicts > 0)
        this.o.metrics.nodePodProbeConflicts.inc({ controller: 'podprobemarker' }, result.conflicts);
      if (result.written) {
        this.nodeWrites.expect(node, result.object?.metadata.resourceVersion);
        this.o.metrics.nodePodProbeWrites.inc({ controller: 'podprobemarker', reason: 'probes' });
        this.loop.logger.debug(
          { node, podProbeMarker: `${namespace}/${name}`, pods: onNode.size },
          'NodePodProbe written',
        );
      }
    });
    // what this marker took away or gave back may let a marker the budget left out in, or push one out
    for (const node of nodes) {
      if (this.leftOutOn.has(node)) this.followBudget(node, `${namespace}/${name}`, this.nodeBudget(node));
    }
  }

  private removeFromNodes(namespace: string, name: string): Promise<void> {
    return this.writeNodes(namespace, name, new Map());
  }

  /** Deleted: probes out of every NodePodProbe, marks off its pods, then the finalizer off. */
  private async finalize(key: string, marker: PodProbeMarker): Promise<void> {
    if (!(marker.metadata.finalizers ?? []).includes(NODE_POD_PROBE_CLEANUP_FINALIZER)) return;
    const { namespace = '', name } = splitKey(key);
    const pods = new Map<string, WirePod>();
    for (const npp of this.o.nodePodProbes.store.byIndex(NPP_MARKER_INDEX, key)) {
      for (const entry of npp.spec?.podProbes ?? []) {
        if (entry.namespace !== namespace || !(entry.probes ?? []).some((p) => markerNameOf(p) === name)) continue;
        const pod = this.o.pods.get(`${entry.namespace}/${entry.name}`);
        if (pod?.metadata?.uid === entry.uid) pods.set(objectKey(pod), pod);
      }
    }
    for (const pod of this.o.pods.store.byIndex(NAMESPACE_INDEX, namespace)) {
      if (isProbedPod(marker, pod)) pods.set(objectKey(pod), pod);
    }
    await this.removeFromNodes(namespace, name);
    for (const pod of pods.values()) await this.unmark(marker, pod);
    const { object, written } = await updateFromFresh<PodProbeMarker>(
      this.o.client,
      POD_PROBE_MARKERS,
      name,
      namespace,
      (draft) => {
        const finalizers = draft.metadata.finalizers ?? [];
        if (!finalizers.includes(NODE_POD_PROBE_CLEANUP_FINALIZER)) return false;
        draft.metadata.finalizers = finalizers.filter((f) => f !== NODE_POD_PROBE_CLEANUP_FINALIZER);
        return true;
      },
    );
    if (written) {
      this.expectations.expect(key, object?.metadata.resourceVersion);
      this.loop.logger.info({ podProbeMarker: key, pods: pods.size }, 'probes and marks removed; finalizer removed');
    }
  }

  private async unmark(marker: PodProbeMarker, pod: WirePod): Promise<void> {
    let current: WirePod | undefined = pod;
    if (cleanupPatchFor(marker, pod)) {
      const result = await patchPodMetadata(this.o.client, pod, (p) => cleanupPatchFor(marker, p));
      current = result.pod;
      if (result.written) this.o.metrics.podProbePodWrites.inc({ write: 'cleanup' });
    }
    if (!current || !conditionsWithout(marker, current)) return;
    const result = await patchPodConditions(this.o.client, current, (p) => conditionsWithout(marker, p));
    if (result.written) this.o.metrics.podProbePodWrites.inc({ write: 'cleanup' });
  }
}
