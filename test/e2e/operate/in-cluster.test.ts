// Our system installed in the real local cluster as users install it (test/cluster/k8s/in-cluster.ts): the agent as
// deploy/overlays/ip-retention's DaemonSet (in-cluster config through the `kubernetes` Service, the node's CRI socket
// by hostPath, kruise-ipam copied onto the node), the controller as the Deployment (2 replicas, leader election, PDB,
// webhooks through its Service), from the image the cluster built ($KRUISE_IMAGE). Nothing of ours runs on the host.
// Checked: the rollout and the plugin on the nodes; what each container runs with, read from its process on the node
// (capabilities, no_new_privs, seccomp, uid, mounts, what it may write, namespaces); the DaemonSet pod's own token
// names its node and is confined to it; the controller's webhooks refuse a caller without the API server's client
// certificate; an agent pod deleted mid-CRR is replaced and the CRR completes exactly once;
// the leading controller replica killed mid-ImagePullJob hands the Lease over within its duration and no NodeImage
// write is lost.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IMAGE_PULL_JOBS, type ImagePullJob } from '../../../src/api/imagepulljob.js';
import { NODE_IMAGES, type NodeImage } from '../../../src/api/nodeimage.js';
import { CriClient } from '../../../src/cri/client.js';
import { KubeClient } from '../../../src/kube/client.js';
import { loadKubeconfig } from '../../../src/kube/credentials/kubeconfig.js';
import { isForbidden, isNotFound } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/object.js';
import { CoreResources } from '../../../src/kube/resource.js';
import { CONTROLLER_LEASE, systemPods, type PodRow } from '../../cluster/k8s/in-cluster.js';
import type { NodeLayout } from '../../cluster/k8s/layout.js';
import { kubectl, SYSTEM_NAMESPACE } from '../../cluster/k8s/system.js';
import { runningPid } from '../../cluster/runtime/processes.js';
import { SELF_SUBJECT_REVIEWS, type SelfSubjectReview } from '../../support/kube-resources.js';
import { removeImages } from '../../support/nodeimages.js';
import {
  isReadOnly,
  mountAt,
  parseMountInfo,
  parseProcStatus,
  writablePoints,
  WRITE_ACCESS_PROBE,
  type Mount,
  type WriteAccess,
} from '../../support/proc-security.js';
import {
  nodeLauncher,
  startInClusterSystem,
  useRealCluster,
  type InClusterSystem,
  type RealCluster,
} from '../../support/real-cluster.js';
import { freshNamespace, removeNamespace, splitReference } from '../../support/real-images.js';
import { waitFor } from '../../support/wait.js';
import {
  containerStatus,
  createCrr,
  getCrr,
  getPod,
  runPod,
  waitCompleted,
  type CrrScope,
  type PodObject,
} from '../containerrecreate/stack.js';
import { waitForJob } from '../controller/controller-env.js';

const NS = 'e2e-in-cluster';

interface PodWithMounts extends KubeObject {
  status?: {
    containerStatuses?: { name: string; volumeMounts?: { mountPath: string; recursiveReadOnly?: string }[] }[];
  };
}
interface Lease extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; leaseTransitions?: number };
}

function must(cluster: RealCluster, args: string[]): string {
  const result = kubectl(cluster.layout, args);
  assert.ok(result.ok, `kubectl ${args.join(' ')}: ${result.out}`);
  return result.out;
}

describe('installed in the cluster (deploy/overlays/ip-retention with the built image): no host process', function () {
  this.timeout(300_000);
  let cluster: RealCluster;
  let system: InClusterSystem | undefined;
  let scope: CrrScope;
  const files: string[] = [];

  before(async () => {
    cluster = await useRealCluster();
    system = startInClusterSystem(cluster);
    process.stderr.write(
      `      [in-cluster] ${system.image}: every pod Ready ${system.rolloutSeconds.toFixed(1)} s after apply\n`,
    );
    await freshNamespace(cluster.admin, NS);
    scope = { client: cluster.admin, namespace: NS };
  });

  after(async () => {
    for (const file of files) rmSync(file, { force: true });
    if (cluster) await removeNamespace(cluster.admin, NS);
    system?.stop();
  });

  const lease = (): Promise<Lease> =>
    cluster.admin.get<Lease>(CoreResources.leases, CONTROLLER_LEASE, { namespace: SYSTEM_NAMESPACE });

  it('runs an agent pod per node and two controller replicas, one holding the Lease; kruise-ipam is copied onto every node', async () => {
    for (const node of cluster.nodes) system!.agentPod(node);
    const controllers = system!.controllerPods();
    assert.equal(controllers.filter((p) => p.ready).length, 2, JSON.stringify(controllers));
    const holder = (await lease()).spec?.holderIdentity;
    assert.ok(
      controllers.some((p) => p.name === holder),
      `the Lease holder ${holder} is a replica`,
    );
    assert.match(
      must(cluster, ['get', 'pdb', '-n', SYSTEM_NAMESPACE, 'kruise-controller', '-o', 'name']),
      /kruise-controller/,
    );
    // the webhooks name the Service, not a URL
    const hooks = JSON.parse(
      must(cluster, ['get', 'mutatingwebhookconfiguration', 'kruise-mutating-webhook-configuration', '-o', 'json']),
    ) as { webhooks: { clientConfig: { service?: { name: string }; url?: string } }[] };
    for (const hook of hooks.webhooks) assert.equal(hook.clientConfig.service?.name, 'kruise-controller-webhook');
    for (const node of cluster.nodes) {
      // the agent's copy (deploy/overlays/ip-retention: --ipam-install-mode=copy): Node and the plugin on the node
      const wrapper = readFileSync(join(node.hostPaths.cniBinDir, 'kruise-ipam'), 'utf8');
      assert.match(wrapper, /exec '\/opt\/cni\/bin\/kruise-ipam\.d\/node' '\/opt\/cni\/bin\/kruise-ipam\.d\//, wrapper);
      assert.ok(existsSync(join(node.hostPaths.cniBinDir, 'kruise-ipam.d', 'node')), `Node copied onto ${node.name}`);
    }
    // and the controller replicas got their pod addresses from it
    const conflist = readFileSync(join(cluster.nodes[0]!.hostPaths.cniConfDir, '10-kd-pods.conflist'), 'utf8');
    assert.match(conflist, /"type": "kruise-ipam"/);
  });

  // --- what the containers run with (docs/install.md: "What each container runs with, and why")
  const nodeOf = (pod: PodRow): NodeLayout => cluster.nodes.find((n) => n.name === pod.node)!;
  const writableSummary = (probe: WriteAccess): string => {
    const all = writablePoints(probe);
    const below = all.filter((path) => path.startsWith('/hostvarrun/')).length;
    const listed = all.filter((path) => !path.startsWith('/hostvarrun/')).join(' ');
    return below > 0 ? `${listed}, and ${below} mounts below /hostvarrun` : listed;
  };
  // The process as the kernel runs it (its PID from the runtime, /proc read inside the node), and what it may write
  // (a probe run in the container: its user, capabilities, seccomp and mounts).
  const inspect = async (pod: PodRow, container: string, stat: string[] = []) => {
    const node = nodeOf(pod);
    const pid = await system!.containerPid(pod, container);
    const security = parseProcStatus(await system!.readNodeFile(node, `/proc/${pid}/status`));
    const mounts = parseMountInfo(await system!.readNodeFile(node, `/proc/${pid}/mountinfo`));
    const run = await system!.execIn(pod, container, ['node', '-e', WRITE_ACCESS_PROBE, ...stat]);
    assert.equal(run.exitCode, 0, `the probe in ${pod.name}/${container}: ${run.stderr}`);
    const probe = JSON.parse(run.stdout) as WriteAccess;
    const { caps } = security;
    process.stderr.write(
      `      [in-cluster] ${pod.name}/${container} (pid ${pid}): CapInh ${caps.inheritable} CapPrm ${caps.permitted} ` +
        `CapEff ${caps.effective} CapBnd ${caps.bounding} CapAmb ${caps.ambient} NoNewPrivs ${security.noNewPrivs} ` +
        `Seccomp ${security.seccomp} Uid ${security.uids.join('/')} Gid ${security.gids.join('/')}; ` +
        `root ${mountAt(mounts, '/').options[0]}; writable: ${writableSummary(probe)}\n`,
    );
    return { node, pid, security, mounts, probe };
  };
  type Inspected = Awaited<ReturnType<typeof inspect>>;
  const checkCommon = (what: string, { security, mounts, probe }: Inspected, uid: number): void => {
    const none = { inheritable: 0n, permitted: 0n, effective: 0n, bounding: 0n, ambient: 0n };
    assert.deepEqual(security.caps, none, `${what}: capabilities drop ALL`);
    assert.equal(security.noNewPrivs, 1, `${what}: allowPrivilegeEscalation: false`);
    assert.equal(security.seccomp, 2, `${what}: seccompProfile RuntimeDefault (a filter)`);
    assert.deepEqual(security.uids, [uid, uid, uid, uid], `${what}: runAsUser ${uid}`);
    assert.equal(probe.uid, uid);
    assert.ok(isReadOnly(mountAt(mounts, '/')), `${what}: readOnlyRootFilesystem`);
    assert.notEqual(probe.access['/'], 'W', `${what}: / not writable`);
  };
  // what every container may write: its /dev (the runtime's tmpfs, /dev/shm, /dev/termination-log), kubelet's
  // /etc/hosts, the /proc files the runtime masks with /dev/null, and on a cgroup v1 node under runc 1.3 (the
  // containerd 2.x cells) the tmpfs runc makes at /sys/fs/cgroup to hold the hierarchies: the container's own (a new
  // tmpfs, nothing of the host's), left read-write by runc 1.3.3 (mountCgroupV1 mounts it without MS_RDONLY, and
  // finalizeRootfs remounts only mounts of type tmpfs, not the "cgroup" mount it stands for), so uid 0 may create
  // files in it (mode 755); every cgroup hierarchy under it stays read-only, which is what matters
  const cgroupV1Holder = (mounts: Mount[], path: string): boolean =>
    path === '/sys/fs/cgroup' &&
    mountAt(mounts, path).fsType === 'tmpfs' &&
    mounts
      .filter((m) => m.mountPoint.startsWith('/sys/fs/cgroup/'))
      .every((m) => isReadOnly(m) && m.fsType === 'cgroup');
  const anyContainerWrites = (mounts: Mount[], path: string): boolean =>
    path === '/dev' ||
    path.startsWith('/dev/') ||
    path === '/etc/hosts' ||
    (path.startsWith('/proc/') && mountAt(mounts, path).root === '/null') ||
    cgroupV1Holder(mounts, path);
  const beyond = ({ mounts, probe }: Inspected, own: string[]): string[] =>
    writablePoints(probe).filter(
      (path) => !own.includes(path) && !anyContainerWrites(mounts, path) && !path.startsWith('/hostvarrun/'),
    );
  const namespaceOf = (pid: number, kind: 'net' | 'pid'): string => readlinkSync(`/proc/${pid}/ns/${kind}`);
  const HOST_PATHS = ['/opt/cni/bin', '/var/lib/cni/kruise-ipam'];
  // the agent finds the node's runtime socket (containerd's, or CRI-O's on its cell) under --host-run-dir=/hostvarrun
  const criSocket = (node: NodeLayout): string => node.inNode.runtimeSocket.replace(/^\/run\//, '/hostvarrun/');

  it("runs the agent as deploy/overlays/ip-retention says, read from its process on each node: uid 0 (the CRI socket is root's, 0660) with no capability, no privilege escalation, seccomp filter, read-only root, writing only the overlay's hostPaths, in the node's network and PIDs", async () => {
    for (const node of cluster.nodes) {
      const pod = system!.agentPod(node);
      const CRI_SOCKET = criSocket(node);
      const agent = await inspect(pod, 'daemon', [CRI_SOCKET]);
      const what = `the agent on ${node.name}`;
      checkCommon(what, agent, 0);
      // why uid 0: the runtime's socket is root's with mode 0660 (no capability lets anyone else in)
      const stat = agent.probe.stats[CRI_SOCKET];
      assert.ok(typeof stat === 'object', `${CRI_SOCKET}: ${JSON.stringify(stat)}`);
      assert.equal(stat.uid, 0, `${CRI_SOCKET} owned by root`);
      assert.equal(stat.mode & 0o777, 0o660, `${CRI_SOCKET} mode 0660`);
      // deploy/overlays/ip-retention: the runtime's dir read-only; the plugin's dir and its store writable; nothing else
      assert.ok(isReadOnly(mountAt(agent.mounts, '/hostvarrun')), `${what}: /hostvarrun mounted read-only`);
      assert.equal(agent.probe.access['/hostvarrun'], 'EROFS');
      for (const dir of HOST_PATHS) {
        assert.ok(!isReadOnly(mountAt(agent.mounts, dir)), `${what}: ${dir} mounted writable`);
        assert.equal(agent.probe.access[dir], 'W', `${what}: ${dir} writable`);
      }
      assert.deepEqual(beyond(agent, HOST_PATHS), [], `${what} writes nowhere else`);
      // the runtime's image directory, read-only, for the disk check (statfs only); on containerd it reads there
      assert.ok(isReadOnly(mountAt(agent.mounts, '/host/var/lib/containerd')), `${what}: image dir read-only`);
      if (node.runtime === 'containerd') {
        await waitFor(
          async () =>
            /^kruise_daemon_image_fs_used_percent \d/m.test(
              await (await fetch(`http://${node.ip}:10221/metrics`)).text(),
            ),
          { timeoutMs: 30_000, message: `${what}: the disk check reads the image filesystem (its gauge)` },
        );
      }
      // Below /hostvarrun, the mounts the node has there (other containers' rootfs and shm, and in this cluster
      // /run/containerd itself) are read-only only where the runtime makes read-only mounts recursive
      // (recursiveReadOnly: IfPossible; containerd 2.0 and kernel 5.12 or later); kubelet reports which it did.
      const status = await cluster.admin.get<PodWithMounts>(CoreResources.pods, pod.name, {
        namespace: SYSTEM_NAMESPACE,
      });
      const mode = status.status?.containerStatuses
        ?.find((c) => c.name === 'daemon')
        ?.volumeMounts?.find((m) => m.mountPath === '/hostvarrun')?.recursiveReadOnly;
      const writableBelow = writablePoints(agent.probe).filter((path) => path.startsWith('/hostvarrun/'));
      if (mode === 'Enabled') assert.deepEqual(writableBelow, [], `${what}: /hostvarrun recursively read-only`);
      else {
        assert.equal(mode, 'Disabled', `kubelet reports the mode it used for /hostvarrun`);
        process.stderr.write(
          `      [in-cluster] ${node.name}: kubelet reports recursiveReadOnly Disabled for /hostvarrun (the runtime ` +
            `cannot): ${writableBelow.length} mounts below it writable, e.g. ${writableBelow[0]}\n`,
        );
      }
      // hostNetwork and hostPID: the node's namespaces (its holder process's)
      const holder = await runningPid(node.holderPidFile, node.dir);
      assert.ok(holder !== undefined, `${node.name}'s holder process`);
      for (const kind of ['net', 'pid'] as const)
        assert.equal(namespaceOf(agent.pid, kind), namespaceOf(holder, kind), `${what}: the node's ${kind} namespace`);
      // and with no capability at all it made its installs: the first test finds kruise-ipam copied onto the node
    }
  });

  it('runs the controller as deploy/ says, read from its processes: uid 65532, no capability, no privilege escalation, seccomp filter, read-only root, writing only its certificate dir, in namespaces of its own', async () => {
    const controllers = system!.controllerPods().filter((p) => p.ready && !p.deleting);
    assert.equal(controllers.length, 2, JSON.stringify(controllers));
    for (const pod of controllers) {
      const controller = await inspect(pod, 'controller');
      const what = `the controller ${pod.name}`;
      checkCommon(what, controller, 65532);
      const certs = '/tmp/kruise-controller-certs';
      assert.equal(controller.probe.access[certs], 'W', `${what}: its certificate dir (emptyDir) writable`);
      assert.deepEqual(beyond(controller, [certs]), [], `${what} writes nowhere else`);
      assert.ok(!writablePoints(controller.probe).some((p) => p.startsWith('/hostvarrun')), 'no host directory');
      const holder = await runningPid(controller.node.holderPidFile, controller.node.dir);
      for (const kind of ['net', 'pid'] as const)
        assert.notEqual(
          namespaceOf(controller.pid, kind),
          namespaceOf(holder!, kind),
          `${what}: its own ${kind} namespace`,
        );
    }
  });

  it("answers its webhooks only for the API server (the pki's webhook client CA from the component's ConfigMap): a forged review from a node gets 401", async () => {
    const ips = kubectl(cluster.layout, [
      'get',
      'pods',
      '-n',
      SYSTEM_NAMESPACE,
      '-l',
      'control-plane=controller',
      '-o',
      'jsonpath={.items[*].status.podIP}',
    ]);
    assert.ok(ips.ok, ips.out);
    const [launcher, ...launcherArgs] = await nodeLauncher(cluster.nodes[0]!);
    const curl = (args: string[]): string =>
      spawnSync(launcher!, [...launcherArgs, 'curl', '-sk', '-m', '10', ...args], { encoding: 'utf8' }).stdout;
    for (const ip of ips.out.split(/\s+/).filter(Boolean)) {
      const forged = curl([
        '-w',
        '\n%{http_code}',
        '-H',
        'content-type: application/json',
        '--data-binary',
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"forged"}}',
        `https://${ip}:9876/mutate-apps-kruise-io-containerrecreaterequest`,
      ]);
      assert.match(forged, /client certificate is required[\s\S]*\n401$/, `${ip}: ${forged}`);
      assert.match(curl([`http://${ip}:8000/metrics`]), /^kruise_controller_webhook_client_auth 1$/m, ip);
    }
  });

  it("gives the agent its DaemonSet pod's token, which names its node: its node's NodeImage status is written, another node's refused", async () => {
    const [nodeA, nodeB] = cluster.nodes as [NodeLayout, NodeLayout];
    const pod = system!.agentPod(nodeA);
    const node0Kubelet = nodeA.inNode.kubeletRoot;
    // the projected token kubelet wrote for the pod: a tmpfs inside the node, read there
    const volumes = join(node0Kubelet, 'pods', pod.uid, 'volumes', 'kubernetes.io~projected');
    const listing = await system!.readNodeFile(nodeA, '/proc/self/mounts');
    const tokenDir = listing
      .split('\n')
      .map((line) => line.split(' ')[1] ?? '')
      .find((mount) => mount.startsWith(`${volumes}/`));
    assert.ok(tokenDir, `a projected volume mounted at ${volumes}/...`);
    const token = (await system!.readNodeFile(nodeA, join(tokenDir, 'token'))).trim();
    const file = join(cluster.layout.k8sDir, 'credentials', `in-cluster-agent-${nodeA.name}.kubeconfig`);
    files.push(file);
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: ${cluster.layout.apiServerUrl}, certificate-authority: ${join(cluster.layout.pkiDir, 'ca.crt')}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: ${token}}}]
`,
      { mode: 0o600 },
    );
    const agent = new KubeClient(await loadKubeconfig(file), { timeoutMs: 30_000 });
    const review = await agent.create<SelfSubjectReview>(SELF_SUBJECT_REVIEWS, { metadata: {} });
    assert.equal(review.status?.userInfo?.username, 'system:serviceaccount:kruise-system:kruise-daemon');
    assert.deepEqual(review.status?.userInfo?.extra?.['authentication.kubernetes.io/node-name'], [nodeA.name]);
    assert.deepEqual(review.status?.userInfo?.extra?.['authentication.kubernetes.io/pod-name'], [pod.name]);
    const statusOf = async (name: string): Promise<{ status: unknown }> => ({
      status: (await cluster.admin.get<NodeImage>(NODE_IMAGES, name)).status ?? {},
    });
    await agent.patch(NODE_IMAGES, nodeA.name, await statusOf(nodeA.name), { type: 'merge', subresource: 'status' });
    await assert.rejects(
      agent.patch(NODE_IMAGES, nodeB.name, await statusOf(nodeB.name), { type: 'merge', subresource: 'status' }),
      (err: unknown) => isForbidden(err) && String(err).includes(`which belongs to node ${nodeB.name}`),
    );
  });

  it('replaces an agent pod deleted mid-CRR (DaemonSet) and the CRR completes exactly once: restartCount + 1', async () => {
    const node = cluster.nodes[0]!;
    // app takes 3 s to stop on SIGTERM: the agent is deleted while it waits for that
    const slowStop = ['sh', '-c', 'trap "sleep 3; exit 0" TERM; while true; do sleep 1; done'];
    const spec: PodObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'crr-agent-deleted', namespace: NS },
      spec: {
        nodeName: node.name,
        terminationGracePeriodSeconds: 10,
        containers: ['app', 'side'].map((name) => ({
          name,
          image: cluster.images.busybox1,
          command: name === 'app' ? slowStop : ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
        })),
      },
    };
    const before = await runPod(scope, spec);
    const oldAgent = system!.agentPod(node);
    await createCrr(scope, 'crr-agent-deleted', { podName: 'crr-agent-deleted', containers: [{ name: 'app' }] });
    await waitFor(async () => (await getCrr(scope, 'crr-agent-deleted'))?.status?.phase === 'Recreating', {
      timeoutMs: 30_000,
      message: 'the CRR Recreating',
    });
    must(cluster, ['delete', 'pod', '-n', SYSTEM_NAMESPACE, oldAgent.name, '--wait=false']);
    const newAgent = await waitFor(
      () => {
        const pods = systemPods(cluster.layout, 'daemon');
        return pods.find((p) => p.node === node.name && p.ready && !p.deleting && p.uid !== oldAgent.uid);
      },
      { timeoutMs: 90_000, message: `a new agent pod Ready on ${node.name}` },
    );
    assert.notEqual(newAgent.name, oldAgent.name);
    const done = await waitCompleted(scope, 'crr-agent-deleted', 90_000);
    assert.deepEqual(
      done.status?.containerRecreateStates?.map((s) => `${s.name}=${s.phase}`),
      ['app=Succeeded'],
    );
    // running again, once: app restarted exactly once, side never
    const after = await waitFor(
      async () => {
        const p = await getPod(scope, 'crr-agent-deleted');
        return p?.status?.containerStatuses?.every((s) => s.ready) ? p : undefined;
      },
      { timeoutMs: 60_000, message: 'both containers ready again' },
    );
    assert.equal(containerStatus(after, 'app').restartCount, containerStatus(before, 'app').restartCount + 1);
    assert.equal(containerStatus(after, 'side').restartCount, containerStatus(before, 'side').restartCount);
    assert.equal(after.metadata?.uid, before.metadata?.uid);
  });

  it('hands leadership over within the lease time when the leading replica dies (frozen, pod deleted with grace 0) mid-ImagePullJob, and loses no NodeImage write', async () => {
    const ref = cluster.images.busybox2;
    const { image, tag } = splitReference(ref);
    // not on the nodes, so the job is still pulling when the leader goes
    for (const node of cluster.nodes) {
      await removeImages(new CriClient({ socket: node.hostPaths.runtimeSocket }), [ref]).catch(() => undefined);
    }
    const before = await lease();
    const leader = before.spec?.holderIdentity ?? '';
    const leaseMs = (before.spec?.leaseDurationSeconds ?? 15) * 1000;
    assert.ok(
      system!.controllerPods().some((p) => p.name === leader),
      `the leader ${leader} is a replica`,
    );
    const job: ImagePullJob = {
      metadata: { name: 'failover', namespace: NS },
      spec: { image: ref, parallelism: 1, completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 120 } },
    };
    await cluster.admin.create(IMAGE_PULL_JOBS, job, { namespace: NS });
    const tagOn = async (node: string) =>
      (await cluster.admin.get<NodeImage>(NODE_IMAGES, node)).spec?.images?.[image]?.tags.find((t) => t.tag === tag);
    await waitFor(async () => (await tagOn(cluster.nodes[0]!.name)) !== undefined, {
      timeoutMs: 60_000,
      message: 'the job reaches the first node',
    });
    const running = await cluster.admin.get<ImagePullJob>(IMAGE_PULL_JOBS, 'failover', { namespace: NS });
    assert.equal(running.status?.completionTime, undefined, 'the job still runs when the leader is killed');
    const survivors = system!
      .controllerPods()
      .map((p) => p.name)
      .filter((name) => name !== leader);
    const killed = Date.now();
    // The leader dies without a word, as when its node goes: frozen (SIGSTOP: it neither renews nor releases the
    // Lease, and kubelet sees no exit to restart), then its pod deleted with grace 0, so kubelet SIGKILLs it. (A
    // SIGKILL alone lets kubelet restart the container, which holds the Lease again at once: the identity is the pod
    // name; a forced delete alone sends SIGTERM first, and the leader releases the Lease.)
    system!.signalPodProcess(leader, '/kruise-controller', 'SIGSTOP');
    must(cluster, ['delete', 'pod', '-n', SYSTEM_NAMESPACE, leader, '--grace-period=0', '--force']);
    const taken = await waitFor(
      async () => {
        const now = await lease();
        return now.spec?.holderIdentity && now.spec.holderIdentity !== leader ? now : undefined;
      },
      { timeoutMs: leaseMs + 30_000, intervalMs: 100, message: 'another replica takes the Lease' },
    );
    const handover = Date.now() - killed;
    process.stderr.write(
      `      [in-cluster] Lease taken by ${taken.spec?.holderIdentity} ${handover} ms after the kill\n`,
    );
    // The survivor takes the Lease once it has seen the record unchanged for leaseDuration: it sees each renewal at
    // its next try (every retry period, 2 s), so it acquires at most leaseDuration + 2 retry periods after the kill.
    // The Deployment's new pod (started a few seconds after the kill) campaigns too and, seeing the record only from
    // its start, can win the same race; either way it is a replica that was not the leader.
    const RETRY_MS = 2_000;
    assert.ok(handover <= leaseMs + 2 * RETRY_MS + 1_000, `handover in ${handover} ms, lease ${leaseMs} ms`);
    const holder = taken.spec?.holderIdentity ?? '';
    assert.ok(
      system!.controllerPods().some((p) => p.name === holder && !p.deleting),
      `the new holder ${holder} is a running replica: ${JSON.stringify(system!.controllerPods())}`,
    );
    process.stderr.write(
      `      [in-cluster] the new leader is ${survivors.includes(holder) ? 'the surviving replica' : "the Deployment's new pod"}\n`,
    );
    const done = await waitForJob(cluster.admin, NS, 'failover', (j) => !!j.status?.completionTime, 120_000);
    assert.equal(done.status?.succeeded, cluster.nodes.length);
    assert.equal(done.status?.failed ?? 0, 0);
    for (const node of cluster.nodes) {
      const ni = await cluster.admin.get<NodeImage>(NODE_IMAGES, node.name);
      const specTag = ni.spec?.images?.[image]?.tags.find((t) => t.tag === tag);
      assert.equal(specTag?.ownerReferences?.length, 1, `one owner on ${node.name}`);
      const reported = ni.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag);
      assert.equal(reported?.phase, 'Succeeded', `${node.name} reports the pull`);
      assert.equal(reported?.version, specTag?.version);
    }
    const nodeImages = (await cluster.admin.list<NodeImage>(NODE_IMAGES)).items.map((n) => n.metadata.name).sort();
    assert.deepEqual(nodeImages, cluster.nodes.map((n) => n.name).sort(), 'one NodeImage per node, none made twice');
    // the Deployment replaces the killed replica
    must(cluster, ['rollout', 'status', '-n', SYSTEM_NAMESPACE, 'deploy/kruise-controller', '--timeout=120s']);
    await cluster.admin.delete(IMAGE_PULL_JOBS, 'failover', { namespace: NS }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  });
});
