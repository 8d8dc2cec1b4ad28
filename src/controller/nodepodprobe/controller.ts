// nodepodprobe controller: one NodePodProbe per Node (virtual-kubelet nodes have none: their pods are probed by
// the provider), deleted with its Node; pod entries whose pod went (gone, finished, being deleted, or recreated
// with another uid) pruned from the spec; and each pod's probe results (the status the agent writes) mapped onto
// the pod: conditions and markerPolicy labels/annotations (pod-marks.ts), each written only when it changes and
// conditional on the pod as read. Keyed by node name.
import { isPodActive } from '../../api/pod-active.js';
import { NODE_POD_PROBES, type NodePodProbe, type PodProbe, type PodProbeStatus } from '../../api/nodepodprobe.js';
import type { PodProbeMarker } from '../../api/podprobemarker.js';
import type { WireNode, WirePod } from '../../api/wire.js';
import { ControllerLoop } from '../../kube/controller-loop.js';
import { ignoreNotFound, isAlreadyExists, isNotFound } from '../../kube/errors.js';
import type { Informer } from '../../kube/informer/informer.js';
import { objectKey } from '../../kube/object.js';
import { OwnWriteExpectations } from '../../kube/own-writes.js';
import { CoreResources } from '../../kube/resource.js';
import type { ReconcileResult } from '../../kube/workqueue/workers.js';
import { rfc3339 } from '../../util/time.js';
import type { ControllerParts } from '../shared/controller-parts.js';
import { writeNodePodProbeSpec } from '../shared/node-pod-probe-write.js';
import { patchPodConditions, patchPodMetadata } from '../shared/pod-marks-write.js';
import { isVirtualKubelet, NPP_MARKER_INDEX } from '../shared/pod-probes.js';
import { conditionsWith, marksFor, metadataPatchFor } from './pod-marks.js';

export const EVENT_CONDITION_CONFLICT = 'ProbeConditionConflict';

const CACHE_WAIT_MS = 100;
/** Conflicts remembered as reported (pod uid and condition type); forgotten all at once past this. */
const REPORTED_CONFLICTS_KEPT = 10_000;
const NODE_CHECK_MS = 1000;

export interface NodePodProbeControllerOptions extends ControllerParts {
  nodes: Informer<WireNode>;
  /** With the NPP_MARKER_INDEX index. */
  nodePodProbes: Informer<NodePodProbe>;
  /** All pods, with the POD_NODE_INDEX index. */
  pods: Informer<WirePod>;
  podProbeMarkers: Informer<PodProbeMarker>;
}

/** The pod an entry stands for, if it is still that pod (same uid) and active. */
function livePod(
  pods: Informer<WirePod>,
  entry: { namespace: string; name: string; uid: string },
): WirePod | undefined {
  const pod = pods.get(`${entry.namespace}/${entry.name}`);
  return pod && pod.metadata?.uid === entry.uid && isPodActive(pod) ? pod : undefined;
}

export class NodePodProbeController {
  private readonly loop: ControllerLoop;
  private readonly expectations: OwnWriteExpectations;
  private readonly podWrites: OwnWriteExpectations;
  /** `<pod uid>/<condition type>` of the conflicts already reported (one event each). */
  private readonly reportedConflicts = new Set<string>();

  constructor(private readonly o: NodePodProbeControllerOptions) {
    this.expectations = new OwnWriteExpectations(o.clock);
    this.podWrites = new OwnWriteExpectations(o.clock);
    this.loop = new ControllerLoop('nodepodprobe', o, (key) => this.reconcile(key));
  }

  start(): void {
    const { nodes, nodePodProbes, pods, podProbeMarkers } = this.o;
    const enqueuePodNode = (pod: WirePod): void => {
      if (pod.spec?.nodeName) this.loop.add(pod.spec.nodeName);
    };
    this.loop.watch(
      this.expectations.follow(nodePodProbes, (npp) => npp.metadata.name ?? ''),
      this.podWrites.follow(pods, objectKey),
      nodes.addHandlers({
        onAdd: (node) => this.addNode(node),
        onUpdate: (old, node) => {
          if (
            isVirtualKubelet(old) !== isVirtualKubelet(node) ||
            (!old.metadata?.deletionTimestamp && node.metadata?.deletionTimestamp)
          )
            this.addNode(node);
        },
        onDelete: (node) => this.addNode(node),
      }),
      nodePodProbes.addHandlers({
        onAdd: (npp) => this.loop.add(npp.metadata.name ?? ''),
        onUpdate: (old, npp) => {
          if (old.metadata.resourceVersion !== npp.metadata.resourceVersion) this.loop.add(npp.metadata.name ?? '');
        },
        onDelete: (npp) => this.loop.add(npp.metadata.name ?? ''),
      }),
      pods.addHandlers({
        // a pod recreated under an old name (another uid), finished, deleted: its entry goes
        onAdd: enqueuePodNode,
        onUpdate: (old, pod) => {
          if (isPodActive(old) !== isPodActive(pod) || old.spec?.nodeName !== pod.spec?.nodeName) {
            enqueuePodNode(old);
            enqueuePodNode(pod);
          }
        },
        onDelete: enqueuePodNode,
      }),
      // a marker's policies or condition types changed: the nodes where it has probes map results again
      podProbeMarkers.addHandlers({
        onUpdate: (old, marker) => {
          if (old.metadata.generation !== marker.metadata.generation) this.enqueueMarkerNodes(marker);
        },
      }),
    );
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private addNode(node: WireNode): void {
    if (node.metadata?.name) this.loop.add(node.metadata.name);
  }

  private enqueueMarkerNodes(marker: PodProbeMarker): void {
    const key = objectKey(marker);
    for (const npp of this.o.nodePodProbes.store.byIndex(NPP_MARKER_INDEX, key)) this.loop.add(npp.metadata.name ?? '');
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    if (!name) return;
    const node = this.o.nodes.get(name);
    const npp = this.o.nodePodProbes.get(name);
    if (!node || node.metadata?.deletionTimestamp || isVirtualKubelet(node)) {
      if (!npp || npp.metadata.deletionTimestamp) return;
      // the cache may lag behind a Node just created: confirm before deleting
      if (!node && (await this.nodeExists(name))) return { requeueAfter: NODE_CHECK_MS };
      await this.o.client
        .delete(NODE_POD_PROBES, name, { preconditions: { uid: npp.metadata.uid } })
        .catch(ignoreNotFound);
      this.o.metrics.nodePodProbeWrites.inc({ controller: 'nodepodprobe', reason: 'delete' });
      this.loop.logger.info({ node: name }, 'NodePodProbe deleted with its Node');
      return;
    }
    if (!npp) {
      try {
        const created = await this.o.client.create<NodePodProbe>(NODE_POD_PROBES, { metadata: { name }, spec: {} });
        this.expectations.expect(name, created.metadata.resourceVersion);
        this.o.metrics.nodePodProbeWrites.inc({ controller: 'nodepodprobe', reason: 'create' });
        this.loop.logger.info({ node: name }, 'NodePodProbe created');
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return;
    }
    if (npp.metadata.deletionTimestamp) return;
    const fresh = this.expectations.isFresh(name, npp.metadata.resourceVersion);

    const entries = npp.spec?.podProbes ?? [];
    const gone = entries.filter((entry) => !livePod(this.o.pods, entry));
    if (gone.length > 0) {
      const result = await writeNodePodProbeSpec(this.o.client, this.o.clock, npp, fresh, (draft) => this.prune(draft));
      if (result.conflicts > 0)
        this.o.metrics.nodePodProbeConflicts.inc({ controller: 'nodepodprobe' }, result.conflicts);
      if (result.written) {
        this.expectations.expect(name, result.object?.metadata.resourceVersion);
        this.o.metrics.nodePodProbeWrites.inc({ controller: 'nodepodprobe', reason: 'prune' });
        this.loop.logger.debug({ node: name, pods: gone.map((e) => `${e.namespace}/${e.name}`) }, 'pods pruned');
      }
    }

    let waiting = false;
    for (const status of npp.status?.podProbeStatuses ?? []) {
      const pod = livePod(this.o.pods, status);
      if (!pod) continue;
      const podKey = objectKey(pod);
      if (!this.podWrites.isFresh(podKey, pod.metadata?.resourceVersion)) {
        waiting = true;
        continue;
      }
      await this.markPod(pod, status);
    }
    if (waiting) return { requeueAfter: CACHE_WAIT_MS };
  }

  /** Drop the entries whose pod went; true when any did. */
  private prune(draft: NodePodProbe): boolean {
    const before = draft.spec?.podProbes ?? [];
    const kept: PodProbe[] = before.filter((entry) => livePod(this.o.pods, entry));
    if (kept.length === before.length) return false;
    draft.spec = kept.length > 0 ? { ...draft.spec, podProbes: kept } : {};
    return true;
  }

  private async markPod(pod: WirePod, status: PodProbeStatus): Promise<void> {
    const namespace = pod.metadata?.namespace ?? '';
    const marks = marksFor(
      status,
      (marker) => this.o.podProbeMarkers.get(`${namespace}/${marker}`),
      rfc3339(this.o.clock.now()),
    );
    const key = objectKey(pod);
    this.reportConflicts(pod, marks.conflicts);
    let current: WirePod | undefined = pod;
    if (metadataPatchFor(pod, marks)) {
      const result = await patchPodMetadata(this.o.client, pod, (p) => metadataPatchFor(p, marks));
      current = result.pod;
      if (result.written) {
        this.podWrites.expect(key, result.pod?.metadata?.resourceVersion);
        this.o.metrics.podProbePodWrites.inc({ write: 'metadata' });
        this.loop.logger.debug({ pod: key }, 'probe marks written (labels/annotations)');
      }
    }
    if (!current || !conditionsWith(current, marks.conditions)) return;
    const result = await patchPodConditions(this.o.client, current, (p) => conditionsWith(p, marks.conditions));
    if (result.written) {
      this.podWrites.expect(key, result.pod?.metadata?.resourceVersion);
      this.o.metrics.podProbePodWrites.inc({ write: 'conditions' });
      this.loop.logger.debug(
        { pod: key, conditions: marks.conditions.map((c) => `${c.type}=${c.status}`) },
        'probe conditions written',
      );
    }
  }

  /** Two probes naming one condition type: a Warning event on the pod, once per pod and type (the first wins). */
  private reportConflicts(pod: WirePod, conflicts: ReadonlyMap<string, string[]>): void {
    for (const [type, probes] of conflicts) {
      const id = `${pod.metadata?.uid ?? ''}/${type}`;
      if (this.reportedConflicts.has(id)) continue;
      if (this.reportedConflicts.size >= REPORTED_CONFLICTS_KEPT) this.reportedConflicts.clear();
      this.reportedConflicts.add(id);
      const message = `condition ${type} is named by probes ${probes.join(', ')}: ${probes[0] ?? ''} gives it (the first in the results)`;
      this.o.events.event(pod, 'Warning', EVENT_CONDITION_CONFLICT, message, CoreResources.pods);
    }
  }

  private async nodeExists(name: string): Promise<boolean> {
    try {
      await this.o.client.get<WireNode>(CoreResources.nodes, name);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
