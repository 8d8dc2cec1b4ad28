// OpenKruise itself on the real local cluster, the peer of the side-by-side bench (issue 18). Its binaries are built
// by test/cluster/k8s/build.sh `openkruise` into $KD_CACHE/bin/openkruise-<version>/ (kruise-manager, kruise-daemon,
// kruise-e2e.test); its manifests are read from the Go module cache (kustomize over the module's config/), so nothing
// of OpenKruise is kept in this repository. docs/openkruise-side-by-side.md has the facts.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { load } from 'js-yaml';
import { cacheDir, runBuild } from '../k8s/binaries.js';
import { pinned } from '../stack.js';
import type { K8sLayout } from '../k8s/layout.js';
import { kubectl } from '../k8s/system.js';
import { ClusterError } from '../runtime/errors.js';

export const OPENKRUISE_MODULE = 'github.com/openkruise/kruise';

export interface OpenKruiseBuild {
  version: string;
  /** The module root's main package. */
  manager: string;
  /** cmd/daemon. */
  daemon: string;
  /** `go test -c` of test/e2e (a ginkgo suite). */
  e2e: string;
  /** The module's files in the Go module cache (read-only): config/crd/bases, config/rbac, config/default, ... */
  moduleDir: string;
}

export function openKruisePaths(cache = cacheDir()): OpenKruiseBuild {
  const version = pinned('OPENKRUISE_VERSION');
  const bin = join(cache, 'bin', `openkruise-${version}`);
  return {
    version,
    manager: join(bin, 'kruise-manager'),
    daemon: join(bin, 'kruise-daemon'),
    e2e: join(bin, 'kruise-e2e.test'),
    // build.sh sets GOMODCACHE=$KD_CACHE/go/mod; the module path has no upper-case letters to escape
    moduleDir: join(cache, 'go', 'mod', `${OPENKRUISE_MODULE}@${version}`),
  };
}

function missing(build: OpenKruiseBuild): string[] {
  const wanted = [build.manager, build.daemon, build.e2e, join(build.moduleDir, 'config')];
  return wanted.filter((path) => !existsSync(path));
}

/** OpenKruise's binaries and module files, built on first use (several minutes on 2 cores; nothing when cached). */
export async function openKruiseBuild(log: (message: string) => void): Promise<OpenKruiseBuild> {
  const build = openKruisePaths();
  if (missing(build).length > 0) {
    log(`openkruise: building OpenKruise ${build.version} from Go modules into ${cacheDir()} (first run only)`);
    await runBuild((line) => log(`openkruise: ${line}`), process.env, ['openkruise']);
    const still = missing(build);
    if (still.length > 0) throw new ClusterError(`build.sh succeeded but these are missing: ${still.join(', ')}`);
  }
  return build;
}

export interface Manifest {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * One of OpenKruise's kustomizations (a directory under the module's config/, e.g. `default`, `daemonconfig`)
 * rendered with kubectl's kustomize, as objects. `config/default` is the whole install: namespaces, CRDs, RBAC, the
 * manager's Deployment, the daemon's DaemonSet (image `controller:latest`) and the webhook configurations.
 */
export function renderOpenKruise(layout: K8sLayout, build: OpenKruiseBuild, kustomization: string): Manifest[] {
  const dir = join(build.moduleDir, 'config', kustomization);
  const rendered = kubectl(layout, ['kustomize', dir]);
  if (!rendered.ok) throw new ClusterError(`kubectl kustomize ${dir} failed: ${rendered.out}`);
  return rendered.out
    .split(/^---$/m)
    .map((doc) => load(doc) as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null && typeof doc === 'object' && typeof doc.kind === 'string');
}

/**
 * What OpenKruise's kruise-daemon needs from the API, by kind and name: the CRDs of the kinds it watches (NodeImage,
 * ContainerRecreateRequest, NodePodProbe: PodProbeMarkerGate is on by default), the kruise-system namespace and its
 * ServiceAccount, its ClusterRole and binding, and the kruise-daemon-config namespace with the Role that lets it read
 * pull secrets there. Our deploy/ uses the same names for its own objects (drop-in compatibility), so installing
 * these replaces ours until restored.
 */
export const DAEMON_API_OBJECTS: readonly { kind: string; name: string; namespace?: string }[] = [
  { kind: 'Namespace', name: 'kruise-system' },
  { kind: 'Namespace', name: 'kruise-daemon-config' },
  { kind: 'CustomResourceDefinition', name: 'nodeimages.apps.kruise.io' },
  { kind: 'CustomResourceDefinition', name: 'containerrecreaterequests.apps.kruise.io' },
  { kind: 'CustomResourceDefinition', name: 'nodepodprobes.apps.kruise.io' },
  { kind: 'ServiceAccount', name: 'kruise-daemon', namespace: 'kruise-system' },
  { kind: 'ClusterRole', name: 'kruise-daemon-role' },
  { kind: 'ClusterRoleBinding', name: 'kruise-daemon-rolebinding' },
  { kind: 'Role', name: 'kruise-daemon-secret-role', namespace: 'kruise-daemon-config' },
  { kind: 'RoleBinding', name: 'kruise-daemon-secret-rolebinding', namespace: 'kruise-daemon-config' },
];

/** DAEMON_API_OBJECTS as OpenKruise's config/default and config/daemonconfig render them. */
export function daemonApiObjects(layout: K8sLayout, build: OpenKruiseBuild): Manifest[] {
  const rendered = [...renderOpenKruise(layout, build, 'default'), ...renderOpenKruise(layout, build, 'daemonconfig')];
  return DAEMON_API_OBJECTS.map((want) => {
    const found = rendered.find(
      (m) => m.kind === want.kind && m.metadata?.name === want.name && m.metadata.namespace === want.namespace,
    );
    if (!found) throw new ClusterError(`OpenKruise ${build.version}'s config renders no ${want.kind} ${want.name}`);
    return found;
  });
}

/** Metadata the API server owns: dropped from a saved object before it is written back. */
const SERVER_METADATA = ['uid', 'creationTimestamp', 'generation', 'managedFields', 'resourceVersion'];

function liveObject(layout: K8sLayout, object: Manifest): Manifest | undefined {
  const got = kubectl(layout, ['get', '-f', '-', '-o', 'json'], JSON.stringify(object));
  if (got.ok) {
    // `kubectl get -f` answers with a List of the one object
    const answer = JSON.parse(got.out) as Manifest & { items?: Manifest[] };
    const live = answer.kind === 'List' ? answer.items?.[0] : answer;
    if (!live) throw new ClusterError(`kubectl get ${object.kind} ${object.metadata?.name ?? ''}: an empty List`);
    return live;
  }
  if (/NotFound|not found/.test(got.out)) return undefined;
  throw new ClusterError(`kubectl get ${object.kind} ${object.metadata?.name ?? ''} failed: ${got.out}`);
}

/** Write `object` whole (a PUT at the live resourceVersion, so nothing of the old one is merged in), or create it. */
function putObject(layout: K8sLayout, object: Manifest): void {
  const live = liveObject(layout, object);
  const what = `${object.kind ?? ''} ${object.metadata?.name ?? ''}`;
  if (!live) {
    const created = kubectl(layout, ['create', '-f', '-'], JSON.stringify(object));
    if (!created.ok) throw new ClusterError(`creating ${what} failed: ${created.out}`);
    return;
  }
  const next = { ...object, metadata: { ...object.metadata, resourceVersion: live.metadata?.resourceVersion } };
  const replaced = kubectl(layout, ['replace', '-f', '-'], JSON.stringify(next));
  if (!replaced.ok) throw new ClusterError(`replacing ${what} failed: ${replaced.out}`);
}

/**
 * `kubectl replace` rewrites kubectl's last-applied annotation from the object it is given, resourceVersion
 * included, when that object has one: a later `kubectl apply` then patches the resourceVersion away and fails
 * ("metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"). Written back without it, the
 * next apply of the same manifest only adds it again.
 */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function withoutServerFields(object: Manifest): Manifest {
  const metadata = { ...object.metadata };
  for (const key of SERVER_METADATA) delete metadata[key];
  const annotations = metadata.annotations as Record<string, string> | undefined;
  if (annotations && LAST_APPLIED in annotations) {
    const rest = { ...annotations };
    delete rest[LAST_APPLIED];
    metadata.annotations = rest;
  }
  const copy: Manifest = { ...object, metadata };
  delete copy.status;
  return copy;
}

/** Puts the objects of an earlier state back. */
export interface Restore {
  (): void;
}

/** What a swap replaced: each object written, and the object of that name before it (absent: undefined). */
interface SavedObject {
  object: Manifest;
  before?: Manifest;
}

function putBack(layout: K8sLayout, saved: readonly SavedObject[]): void {
  for (const { object, before } of [...saved].reverse()) {
    if (before) putObject(layout, withoutServerFields(before));
    else if (object.kind !== 'Namespace' && object.kind !== 'CustomResourceDefinition') {
      // a namespace or CRD created here takes others' objects with it: left in place
      const removed = kubectl(layout, ['delete', '--ignore-not-found', '-f', '-'], JSON.stringify(object));
      if (!removed.ok) throw new ClusterError(`deleting ${object.kind ?? ''} failed: ${removed.out}`);
    }
  }
}

/**
 * Install `objects` in place of whatever has their names (each replaced whole), CRDs waited for until served.
 * Returns what puts the cluster back as it was: the saved objects written back whole, the ones that were absent
 * deleted (in reverse order). With `savedFile`, what was replaced is also written there until it is put back, so a
 * run that crashed before putting it back leaves it for the next one (restoreSavedObjects).
 */
export function swapInObjects(layout: K8sLayout, objects: readonly Manifest[], savedFile?: string): Restore {
  const saved: SavedObject[] = objects.map((object) => {
    const before = liveObject(layout, object);
    return before ? { object, before } : { object };
  });
  if (savedFile !== undefined) {
    mkdirSync(dirname(savedFile), { recursive: true });
    writeFileSync(savedFile, JSON.stringify(saved));
  }
  const restore: Restore = () => {
    putBack(layout, saved);
    if (savedFile !== undefined) rmSync(savedFile, { force: true });
  };
  try {
    for (const object of objects) putObject(layout, object);
    const crds = objects
      .filter((m) => m.kind === 'CustomResourceDefinition')
      .map((m) => `crd/${m.metadata?.name ?? ''}`);
    if (crds.length > 0) {
      const established = kubectl(layout, ['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
      if (!established.ok) throw new ClusterError(`CRDs not established: ${established.out}`);
    }
  } catch (err) {
    restore();
    throw err;
  }
  return restore;
}

/**
 * Put back what a swap with `savedFile` replaced, when its run ended without doing it (a crash). True when there
 * was something to put back.
 */
export function restoreSavedObjects(layout: K8sLayout, savedFile: string): boolean {
  if (!existsSync(savedFile)) return false;
  putBack(layout, JSON.parse(readFileSync(savedFile, 'utf8')) as SavedObject[]);
  rmSync(savedFile, { force: true });
  return true;
}
