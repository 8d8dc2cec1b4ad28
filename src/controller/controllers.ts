// The leader's work: the caches (informers) and the controllers on them. Started when this replica starts leading,
// stopped when it stops (the process then exits, so a new leader starts from the API alone).
import type { Logger } from 'pino';
import { KRUISE_DAEMON_CONFIG_NAMESPACE } from '../api/constants.js';
import type { KubeClient } from '../kube/client.js';
import type { EventRecorder } from '../kube/event-recorder.js';
import { Informer, waitForCacheSync } from '../kube/informer/informer.js';
import { byNamespace, NAMESPACE_INDEX } from '../kube/informer/store.js';
import type { KubeMetrics } from '../kube/metrics.js';
import { CoreResources } from '../kube/resource.js';
import type { Clock } from '../util/clock.js';
import { CrrHousekeeper, newCrrInformer } from './containerrecreate/controller.js';
import { ImageListPullJobController, CONTROLLER_UID_INDEX, byControllerUid } from './imagelistpulljob/controller.js';
import { ImagePullJobController, UID_INDEX, byUid } from './imagepulljob/controller.js';
import {
  NodeImageController,
  OWNER_UID_INDEX,
  ownerUidsOf,
  SECRET_COPY_INDEX,
  secretCopiesOf,
} from './nodeimage/controller.js';
import {
  byControllerUid as byPodControllerUid,
  byTarget,
  PersistentPodStateController,
  POD_CONTROLLER_UID_INDEX,
  PPS_TARGET_INDEX,
} from './persistentpodstate/controller.js';
import { PERSISTENT_POD_STATES, type PersistentPodState } from '../api/persistentpodstate.js';
import { IMAGE_LIST_PULL_JOBS, type ImageListPullJob } from '../api/imagelistpulljob.js';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../api/imagepulljob.js';
import { NODE_IMAGES, type NodeImage } from '../api/nodeimage.js';
import { STATEFULSETS, type StatefulSetObject } from './persistentpodstate/resources.js';
import { PullSecretSync, SOURCE_KEY_INDEX, sourceKeyOf } from './pullsecrets/secret-sync.js';
import type { SecretObject } from './resources.js';
import type { WirePod, WireNode } from '../api/wire.js';
import { OwnWriteExpectations } from '../kube/own-writes.js';
import type { ControllerMetrics } from './shared/metrics.js';
import { NODE_POD_PROBES, type NodePodProbe } from '../api/nodepodprobe.js';
import { POD_PROBE_MARKERS, type PodProbeMarker } from '../api/podprobemarker.js';
import { NodePodProbeController } from './nodepodprobe/controller.js';
import { PodProbeMarkerController } from './podprobemarker/controller.js';
import { byNodeName, markerKeysOf, NPP_MARKER_INDEX, POD_NODE_INDEX } from './shared/pod-probes.js';

export interface ControllerSettings {
  nodeImageCreationDelayMs: number;
  nodeImageResponseTimeoutMs: number;
  /** --crr-response-timeout (default 1 min, OpenKruise's). */
  crrResponseTimeoutMs?: number;
  nodeImageWorkers: number;
  imagePullJobWorkers: number;
  imageListPullJobWorkers: number;
  /** --persistentpodstate-workers (default 3). */
  persistentPodStateWorkers?: number;
  /** --podprobemarker-workers, --nodepodprobe-workers (default 3). */
  podProbeMarkerWorkers?: number;
  nodePodProbeWorkers?: number;
  defaultTagTtlSeconds: number;
  /** The controller's own namespace (its service account's, named in pull-secret 403 messages). */
  namespace?: string;
}

export interface ControllerDeps {
  client: KubeClient;
  events: EventRecorder;
  clock: Clock;
  logger: Logger;
  metrics: ControllerMetrics;
  kubeMetrics?: KubeMetrics;
}

export interface RunningControllers {
  /** Resolves when every cache has synced. */
  synced: Promise<void>;
  informersSynced(): boolean;
  stop(): Promise<void>;
}

export function startControllers(settings: ControllerSettings, deps: ControllerDeps): RunningControllers {
  const { client, logger, clock, kubeMetrics } = deps;
  const common = { logger, metrics: kubeMetrics, clock };
  const nodes = new Informer<WireNode>(CoreResources.nodes, client, { ...common, name: 'nodes' });
  const nodeImages = new Informer<NodeImage>(NODE_IMAGES, client, {
    ...common,
    name: NODE_IMAGES.resource,
    indexers: { [OWNER_UID_INDEX]: ownerUidsOf, [SECRET_COPY_INDEX]: secretCopiesOf },
  });
  const jobs = new Informer<ImagePullJob>(IMAGE_PULL_JOBS, client, {
    ...common,
    name: IMAGE_PULL_JOBS.resource,
    indexers: { [NAMESPACE_INDEX]: byNamespace, [UID_INDEX]: byUid, [CONTROLLER_UID_INDEX]: byControllerUid },
  });
  const listJobs = new Informer<ImageListPullJob>(IMAGE_LIST_PULL_JOBS, client, {
    ...common,
    name: IMAGE_LIST_PULL_JOBS.resource,
  });
  const pods = new Informer<WirePod>(CoreResources.pods, client, {
    ...common,
    name: 'pods',
    indexers: {
      [NAMESPACE_INDEX]: byNamespace,
      [POD_CONTROLLER_UID_INDEX]: byPodControllerUid,
      [POD_NODE_INDEX]: byNodeName,
    },
  });
  // Only the pull-secret copies here; each source secret a job names has a watch of its own (PullSecretSync), so the
  // controller needs no cluster-wide or namespace-wide secret rights.
  const secrets = new Informer<SecretObject>(CoreResources.secrets, client, {
    ...common,
    name: 'secrets',
    namespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
    indexers: { [SOURCE_KEY_INDEX]: sourceKeyOf },
  });
  const crrs = newCrrInformer(client, { clock, logger, metrics: kubeMetrics });
  const persistentPodStates = new Informer<PersistentPodState>(PERSISTENT_POD_STATES, client, {
    ...common,
    name: PERSISTENT_POD_STATES.resource,
    indexers: { [PPS_TARGET_INDEX]: byTarget },
  });
  const statefulSets = new Informer<StatefulSetObject>(STATEFULSETS, client, {
    ...common,
    name: STATEFULSETS.resource,
  });
  const podProbeMarkers = new Informer<PodProbeMarker>(POD_PROBE_MARKERS, client, {
    ...common,
    name: POD_PROBE_MARKERS.resource,
    indexers: { [NAMESPACE_INDEX]: byNamespace },
  });
  const nodePodProbes = new Informer<NodePodProbe>(NODE_POD_PROBES, client, {
    ...common,
    name: NODE_POD_PROBES.resource,
    indexers: { [NPP_MARKER_INDEX]: markerKeysOf },
  });
  const informers = [
    nodes,
    nodeImages,
    jobs,
    listJobs,
    pods,
    secrets,
    crrs,
    persistentPodStates,
    statefulSets,
    podProbeMarkers,
    nodePodProbes,
  ];

  const nodeImageExpectations = new OwnWriteExpectations(clock);
  const jobExpectations = new OwnWriteExpectations(clock);
  const base = { client, events: deps.events, clock, logger, metrics: deps.metrics, kubeMetrics };
  const secretSync = new PullSecretSync(client, secrets, deps.metrics, { clock, logger });
  const nodeImageController = new NodeImageController({
    ...base,
    nodes,
    nodeImages,
    jobs,
    secretCopies: secrets,
    creationDelayMs: settings.nodeImageCreationDelayMs,
    responseTimeoutMs: settings.nodeImageResponseTimeoutMs,
    workers: settings.nodeImageWorkers,
  });
  const jobController = new ImagePullJobController({
    ...base,
    jobs,
    nodeImages,
    pods,
    secretCopies: secrets,
    secretSync,
    controllerNamespace: settings.namespace,
    nodeImageExpectations,
    jobExpectations,
    workers: settings.imagePullJobWorkers,
    defaultTagTtlSeconds: settings.defaultTagTtlSeconds,
  });
  const listController = new ImageListPullJobController({
    ...base,
    listJobs,
    jobs,
    workers: settings.imageListPullJobWorkers,
  });
  const crrHousekeeper = new CrrHousekeeper({
    client,
    crrs,
    pods,
    clock,
    logger,
    metrics: deps.metrics,
    kubeMetrics,
    responseTimeoutMs: settings.crrResponseTimeoutMs,
  });
  const ppsController = new PersistentPodStateController({
    ...base,
    persistentPodStates,
    statefulSets,
    pods,
    nodes,
    workers: settings.persistentPodStateWorkers,
  });
  const probeInformers = { podProbeMarkers, nodePodProbes, pods, nodes };
  const podProbeMarkerController = new PodProbeMarkerController({
    ...base,
    ...probeInformers,
    workers: settings.podProbeMarkerWorkers,
  });
  const nodePodProbeController = new NodePodProbeController({
    ...base,
    ...probeInformers,
    workers: settings.nodePodProbeWorkers,
  });
  const controllers = [
    nodeImageController,
    jobController,
    listController,
    crrHousekeeper,
    ppsController,
    podProbeMarkerController,
    nodePodProbeController,
  ];

  for (const informer of informers) informer.start();
  const synced = waitForCacheSync(...informers).then(() => {
    logger.info({ namespace: KRUISE_DAEMON_CONFIG_NAMESPACE }, 'caches synced; controllers starting');
    for (const c of controllers) c.start();
  });
  synced.catch(() => undefined);

  const gauge = setInterval(() => {
    const counts = { active: 0, completed: 0, deleting: 0 };
    for (const job of jobs.list()) {
      if (job.metadata.deletionTimestamp) counts.deleting++;
      else if (job.status?.completionTime) counts.completed++;
      else counts.active++;
    }
    for (const [state, n] of Object.entries(counts)) deps.metrics.jobs.set({ kind: 'ImagePullJob', state }, n);
  }, 5000);
  gauge.unref();

  return {
    synced,
    informersSynced: () => informers.every((i) => i.hasSynced()),
    async stop() {
      clearInterval(gauge);
      await Promise.all(controllers.map((c) => c.stop()));
      await secretSync.stop();
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}
