// Component "test-images": small OCI images built without Docker from busybox-static (umoci) and pushed to the
// local registries (skopeo). Built once per cluster directory (the OCI layout is kept in <dir>/images/oci);
// pushed only when a registry does not hold exactly the built manifest.
//   $REGISTRY/test/pause:3.9        sandbox image: PID 1 is sh, exits on TERM/INT, otherwise waits forever
//   $REGISTRY/test/busybox:1.0      full busybox userland (every applet; no printenv in Debian's busybox), /VERSION
//   $REGISTRY/test/busybox:2.0      same base layer, different /VERSION, so a different digest
//   $AUTH_REGISTRY/test/busybox:1.0 the 1.0 image (same digest) behind basic auth
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterContext } from '../component.js';
import type { ComponentStatus, ComponentWithStatus } from './component-status.js';
import { clusterPaths, type ClusterPaths } from '../paths.js';
import { ClusterError } from './errors.js';
import { runChecked } from './exec.js';
import { readTextIfExists, writeAtomic } from './files.js';
import { MANIFEST_MEDIA_TYPES, basicAuthHeader, type BasicCredentials } from './http-probe.js';

/** Bump when the image recipe changes: the cached layout is rebuilt. */
const RECIPE_VERSION = 1;
const BUSYBOX = '/bin/busybox';
const CREATED = '2024-01-01T00:00:00Z';
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const PAUSE_SCRIPT = 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done';

export const TEST_IMAGES = {
  pause: { repository: 'test/pause', tag: '3.9', layoutTag: 'pause' },
  busybox1: { repository: 'test/busybox', tag: '1.0', layoutTag: 'busybox-1.0' },
  busybox2: { repository: 'test/busybox', tag: '2.0', layoutTag: 'busybox-2.0' },
} as const;

export interface PushTarget {
  registry: string;
  repository: string;
  tag: string;
  layoutTag: string;
  credentials?: BasicCredentials;
}

function pushTargets(registry: string, authRegistry: string, credentials: BasicCredentials): PushTarget[] {
  return [
    { registry, ...TEST_IMAGES.pause },
    { registry, ...TEST_IMAGES.busybox1 },
    { registry, ...TEST_IMAGES.busybox2 },
    { registry: authRegistry, ...TEST_IMAGES.busybox1, credentials },
  ];
}

function architecture(): string {
  const map: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  return map[process.arch] ?? process.arch;
}

function requireEnv(ctx: ClusterContext, key: string): string {
  const value = ctx.env[key];
  if (!value) throw new ClusterError(`test-images needs ${key} from the registries component (start it first)`);
  return value;
}

async function recipeStamp(): Promise<string> {
  const busybox = await readFile(BUSYBOX);
  const digest = createHash('sha256').update(busybox).digest('hex');
  return `${JSON.stringify({ recipe: RECIPE_VERSION, busybox: digest, arch: architecture() })}\n`;
}

/** A root filesystem with busybox and links for `applets` (all of them for the busybox image). */
async function makeRootfs(root: string, applets: readonly string[], withUserDb: boolean): Promise<void> {
  for (const d of ['bin', 'etc', 'tmp', 'proc', 'sys', 'dev', 'root', 'var'])
    await mkdir(join(root, d), { recursive: true });
  await chmod(join(root, 'tmp'), 0o1777);
  await writeFile(join(root, 'bin', 'busybox'), await readFile(BUSYBOX), { mode: 0o755 });
  for (const applet of applets) {
    if (applet !== 'busybox' && /^[a-z0-9_.[-]+$/i.test(applet)) await symlink('busybox', join(root, 'bin', applet));
  }
  if (withUserDb) {
    await writeFile(
      join(root, 'etc', 'passwd'),
      'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n',
    );
    await writeFile(join(root, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
  }
}

async function umoci(args: string[]): Promise<void> {
  await runChecked('umoci', args, { timeoutMs: 120_000 });
}

/** Build the three images into a fresh OCI layout at `layout`. */
async function buildLayout(layout: string, work: string): Promise<void> {
  const image = (tag: string): string => `${layout}:${tag}`;
  const platform = ['--architecture', architecture(), '--os', 'linux', '--created', CREATED];
  const applets = (await runChecked(BUSYBOX, ['--list'])).split('\n').filter(Boolean);

  await umoci(['init', '--layout', layout]);

  const pauseRoot = join(work, 'pause-rootfs');
  await makeRootfs(pauseRoot, ['sh', 'sleep'], false);
  await umoci(['new', '--image', image('pause-base')]);
  await umoci(['insert', '--image', image('pause-base'), pauseRoot, '/']);
  await umoci([
    'config',
    '--image',
    image('pause-base'),
    '--tag',
    TEST_IMAGES.pause.layoutTag,
    ...platform,
    '--config.entrypoint',
    '/bin/sh',
    '--config.entrypoint',
    '-c',
    '--config.entrypoint',
    PAUSE_SCRIPT,
    '--config.env',
    PATH_ENV,
    '--config.workingdir',
    '/',
  ]);

  const busyboxRoot = join(work, 'busybox-rootfs');
  await makeRootfs(busyboxRoot, applets, true);
  await umoci(['new', '--image', image('busybox-base')]);
  await umoci(['insert', '--image', image('busybox-base'), busyboxRoot, '/']);
  for (const spec of [TEST_IMAGES.busybox1, TEST_IMAGES.busybox2]) {
    const staging = `busybox-${spec.tag}-staging`;
    const versionFile = join(work, `VERSION-${spec.tag}`);
    await writeFile(versionFile, `kruise-daemon test busybox ${spec.tag}\n`);
    await umoci(['tag', '--image', image('busybox-base'), staging]);
    await umoci(['insert', '--image', image(staging), versionFile, '/VERSION']);
    await umoci([
      'config',
      '--image',
      image(staging),
      '--tag',
      spec.layoutTag,
      ...platform,
      '--config.cmd',
      '/bin/sh',
      '--config.env',
      PATH_ENV,
      '--config.label',
      `io.kruise-daemon.test.version=${spec.tag}`,
      '--config.workingdir',
      '/',
    ]);
    await umoci(['rm', '--image', image(staging)]);
  }
  await umoci(['rm', '--image', image('pause-base')]);
  await umoci(['rm', '--image', image('busybox-base')]);
  await umoci(['gc', '--layout', layout]);
}

/** The manifest digest of each tag in an OCI layout's index.json. */
export async function layoutDigests(layout: string): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  const text = await readTextIfExists(join(layout, 'index.json'));
  if (text === undefined) return digests;
  const index = JSON.parse(text) as { manifests?: { digest?: string; annotations?: Record<string, string> }[] };
  for (const entry of index.manifests ?? []) {
    const tag = entry.annotations?.['org.opencontainers.image.ref.name'];
    if (tag && entry.digest) digests.set(tag, entry.digest);
  }
  return digests;
}

/** Build the layout unless a complete one from the same recipe is cached; returns tag -> manifest digest. */
export async function ensureLayout(paths: ClusterPaths, log: (message: string) => void): Promise<Map<string, string>> {
  const layout = join(paths.imagesDir, 'oci');
  const stampFile = join(paths.imagesDir, 'recipe.json');
  const stamp = await recipeStamp();
  const cached = await layoutDigests(layout);
  const complete = Object.values(TEST_IMAGES).every((spec) => cached.has(spec.layoutTag));
  if (complete && (await readTextIfExists(stampFile)) === stamp) return cached;

  log('test-images: building the OCI layout (busybox-static + umoci)');
  const work = join(paths.imagesDir, `build-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const fresh = join(work, 'oci');
    await buildLayout(fresh, work);
    await rm(layout, { recursive: true, force: true });
    await rename(fresh, layout);
    await writeAtomic(stampFile, stamp);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return layoutDigests(layout);
}

/** Digest of the manifest the registry holds for repository:tag, or undefined. */
export async function registryDigest(target: PushTarget): Promise<string | undefined> {
  const headers: Record<string, string> = { accept: MANIFEST_MEDIA_TYPES };
  if (target.credentials) headers.authorization = basicAuthHeader(target.credentials);
  try {
    const response = await fetch(`http://${target.registry}/v2/${target.repository}/manifests/${target.tag}`, {
      method: 'HEAD',
      headers,
      signal: AbortSignal.timeout(5_000),
    });
    return response.ok ? (response.headers.get('docker-content-digest') ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

export async function push(paths: ClusterPaths, layout: string, target: PushTarget): Promise<void> {
  const args = ['--insecure-policy', 'copy', '--quiet', '--dest-tls-verify=false', '--preserve-digests'];
  if (target.credentials) {
    // credentials go through a 0600 auth file, never on the command line
    const auth = { auths: { [target.registry]: { auth: basicAuthHeader(target.credentials).slice('Basic '.length) } } };
    await writeAtomic(paths.registry.skopeoAuthFile, `${JSON.stringify(auth)}\n`, 0o600);
    args.push('--dest-authfile', paths.registry.skopeoAuthFile);
  }
  args.push(`oci:${layout}:${target.layoutTag}`, `docker://${target.registry}/${target.repository}:${target.tag}`);
  await runChecked('skopeo', args, { timeoutMs: 120_000 });
}

export function testImages(): ComponentWithStatus {
  return {
    name: 'test-images',
    async up(ctx: ClusterContext) {
      const paths = clusterPaths(ctx.dir);
      const registry = requireEnv(ctx, 'REGISTRY');
      const authRegistry = requireEnv(ctx, 'AUTH_REGISTRY');
      const credentials = { user: requireEnv(ctx, 'AUTH_USER'), password: requireEnv(ctx, 'AUTH_PASSWORD') };
      const digests = await ensureLayout(paths, ctx.log);
      const layout = join(paths.imagesDir, 'oci');
      const targets = pushTargets(registry, authRegistry, credentials);
      for (const target of targets) {
        const want = digests.get(target.layoutTag);
        if (want !== undefined && (await registryDigest(target)) === want) continue;
        ctx.log(`test-images: pushing ${target.registry}/${target.repository}:${target.tag}`);
        await push(paths, layout, target);
      }
      const ref = (reg: string, spec: { repository: string; tag: string }): string =>
        `${reg}/${spec.repository}:${spec.tag}`;
      return {
        SANDBOX_IMAGE: ref(registry, TEST_IMAGES.pause),
        TEST_IMAGE_BUSYBOX_1: ref(registry, TEST_IMAGES.busybox1),
        TEST_IMAGE_BUSYBOX_2: ref(registry, TEST_IMAGES.busybox2),
        TEST_IMAGE_AUTH_BUSYBOX_1: ref(authRegistry, TEST_IMAGES.busybox1),
      };
    },
    async down() {
      // images stay cached in <dir>/images and in the registries' data (down --purge deletes them)
    },
    async status(ctx: ClusterContext): Promise<ComponentStatus[]> {
      const { REGISTRY: registry, AUTH_REGISTRY: authRegistry, AUTH_USER: user, AUTH_PASSWORD: password } = ctx.env;
      if (!registry || !authRegistry || !user || !password) {
        return [{ name: 'test-images', healthy: false, detail: 'registries not known (no env file)' }];
      }
      const targets = pushTargets(registry, authRegistry, { user, password });
      const missing: string[] = [];
      for (const target of targets) {
        if ((await registryDigest(target)) === undefined)
          missing.push(`${target.registry}/${target.repository}:${target.tag}`);
      }
      return [
        {
          name: 'test-images',
          healthy: missing.length === 0,
          detail:
            missing.length === 0 ? `${targets.length} images in the registries` : `missing: ${missing.join(', ')}`,
        },
      ];
    },
  };
}
