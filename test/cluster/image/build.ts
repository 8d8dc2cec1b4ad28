// The kruise-daemon image, built on this machine without a Docker engine (docs/adr/0005-image-without-an-engine.md):
// a root filesystem assembled from Debian .debs (`apt-get download`, only the libraries Node links against,
// coreutils' `env` for the commands' `#!/usr/bin/env node` and base-files' release files), the Node 24 binary of the
// npm package `node` (the devDependency), `npm ci --omit=dev` and the compiled src/ with proto/, made into an OCI
// image with umoci. The Dockerfile's application on a smaller base (no shell, no npm; spec.ts holds what both must
// agree on), in four layers, least changing first:
//   1 base   Debian's libc6, libgcc-s1, libstdc++6, gcc-12-base, /usr/bin/env, the release files, dpkg status
//            entries of those packages; passwd/group with nonroot 65532
//   2 node   /usr/local/bin/node (the npm package's binary, unmodified) and its LICENSE
//   3 deps   /opt/kruise-daemon/{package.json,package-lock.json,node_modules} (production dependencies only)
//   4 app    /opt/kruise-daemon/{proto,dist/src} and the commands in /usr/local/bin
// The result is cached by content in $KD_CACHE/image/oci-<key> (key: the recipe, the .debs' sha256, Node's sha256, the
// package files, every shipped file of dist/src and proto/): a warm call hashes its inputs and builds nothing.
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import {
  chmod,
  chown,
  copyFile,
  cp,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { packageRoot } from '../../../src/util/repo-root.js';
import { cacheDir } from '../k8s/binaries.js';
import { ClusterError, PrerequisiteError } from '../runtime/errors.js';
import { run, runChecked } from '../runtime/exec.js';
import { readTextIfExists } from '../runtime/files.js';
import { APP_DIR, IMAGE_COMMANDS, IMAGE_CONFIG } from './spec.js';

/** Bump when the recipe below changes in a way its inputs do not show: every cached image is rebuilt. */
const RECIPE_VERSION = 3;
/** Every file and history entry gets this time, so the same inputs give the same layers. */
const CREATED = '2026-01-01T00:00:00Z';
/** Whole packages of the base layer: what `ldd node` names (libc6, libstdc++6, libgcc-s1) and their dependency. */
export const BASE_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6', 'gcc-12-base'] as const;
/**
 * Packages of which only some files are taken: coreutils for `env`, which every command's shebang runs; base-files
 * for the release files that say which Debian this is (image scanners read them).
 */
export const PARTIAL_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  coreutils: ['./usr/bin/env'],
  'base-files': ['./etc/debian_version', './etc/os-release', './usr/lib/os-release'],
};
/** Left out of the base: documentation (each package's copyright stays), translations, iconv modules (Node has ICU). */
const PRUNED = ['usr/share/man', 'usr/share/info', 'usr/share/locale', 'usr/share/lintian', 'usr/share/gcc'];
const PRUNED_LIBDIRS = ['gconv'];
const MULTIARCH: Readonly<Record<string, string>> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

export interface BuiltImage {
  /** The OCI layout holding the image (shared, read-only: copy from it). */
  layout: string;
  /** Its tag in the layout and in registries: `<package version>-<first 12 digits of the key>`. */
  tag: string;
  /** sha256 of every input of the build. */
  key: string;
  /** The manifest's digest (sha256:...). */
  manifestDigest: string;
  /** Whether this call built it (false: it was in the cache). */
  built: boolean;
}

export interface ImageBuildOptions {
  log: (message: string) => void;
  /** KD_CACHE (default as binaries.ts: $KD_CACHE, else ~/.cache/kruise-daemon). */
  cache?: string;
  /** The compiled tree whose src/ goes in (default: the one this file belongs to). */
  outDir?: string;
  /** Node 24 (default: the npm package `node`'s real binary under node_modules). */
  nodeBinary?: string;
}

interface DebRef {
  package: string;
  url: string;
  file: string;
  sha256: string;
}

interface AppFile {
  /** Path inside APP_DIR. */
  rel: string;
  /** Path on this machine. */
  source: string;
}

export function architecture(): string {
  const map: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' };
  return map[process.arch] ?? process.arch;
}

/** The tree this file was compiled into: <outDir>/test/cluster/image/build.js -> <outDir>. */
function defaultOutDir(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

/** The real Node binary of the npm package `node` (its bin/node is a link into node-<os>-<arch>). */
export function npmNodeBinary(root = packageRoot()): string {
  const path = join(root, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(path)) {
    throw new PrerequisiteError(`no Node binary at ${path}: run npm ci (the devDependency "node" ships Node 24)`);
  }
  return realpathSync(path);
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function fileSha256(path: string): Promise<string> {
  return sha256(await readFile(path));
}

/** Every file below `dir` (relative paths, sorted). */
async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/**
 * The files of the app layer: proto/ and dist/src's .js (and .js.map) whose .ts source exists (tsc never deletes
 * output of a removed source; the Dockerfile's fresh build has none of it).
 */
async function appFiles(root: string, outDir: string): Promise<AppFile[]> {
  const files: AppFile[] = [];
  for (const rel of await walk(join(root, 'proto')))
    files.push({ rel: `proto/${rel}`, source: join(root, 'proto', rel) });
  for (const rel of await walk(join(outDir, 'src'))) {
    const base = /^(.*)\.js(\.map)?$/.exec(rel)?.[1];
    if (base === undefined || !existsSync(join(root, 'src', `${base}.ts`))) continue;
    files.push({ rel: `dist/src/${rel}`, source: join(outDir, 'src', rel) });
  }
  for (const [command, entry] of Object.entries(IMAGE_COMMANDS)) {
    if (!files.some((f) => f.rel === entry)) {
      throw new ClusterError(`${entry} (command ${command}) is not built in ${outDir}: run npm run build`);
    }
  }
  return files;
}

async function aptUpdate(log: (message: string) => void): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new PrerequisiteError('apt-get knows no candidate for the base packages and only root can apt-get update');
  }
  log('image: apt-get update (the package lists lack a base package)');
  await runChecked('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'update', '-q'], {
    env: { DEBIAN_FRONTEND: 'noninteractive' },
    timeoutMs: 600_000,
  });
}

/** What `apt-get download` would fetch for `names` (URL, file name, sha256), updating the lists once if needed. */
async function debRefs(names: readonly string[], log: (message: string) => void): Promise<DebRef[]> {
  const parse = (text: string): DebRef[] =>
    [...text.matchAll(/^'([^']+)' (\S+) \d+ SHA256:([0-9a-f]{64})$/gm)].map((m) => ({
      url: m[1]!,
      file: m[2]!,
      sha256: m[3]!,
      package: m[2]!.split('_')[0]!,
    }));
  const ask = (): Promise<DebRef[]> =>
    run('apt-get', ['download', '--print-uris', ...names], { timeoutMs: 60_000 }).then((r) =>
      r.code === 0 ? parse(r.stdout) : [],
    );
  let refs = await ask();
  if (refs.length !== names.length) {
    await aptUpdate(log);
    refs = await ask();
  }
  if (refs.length !== names.length) {
    throw new ClusterError(`apt-get download --print-uris ${names.join(' ')} did not name one .deb for each`);
  }
  return refs.sort((a, b) => a.package.localeCompare(b.package));
}

/** The .debs in `debDir`, downloaded with apt-get when absent, checked against the lists' sha256. */
async function fetchDebs(refs: readonly DebRef[], debDir: string, log: (message: string) => void): Promise<void> {
  await mkdir(debDir, { recursive: true });
  const missing = [];
  for (const ref of refs) {
    const path = join(debDir, ref.file);
    if (existsSync(path) && (await fileSha256(path)) === ref.sha256) continue;
    missing.push(ref);
  }
  if (missing.length === 0) return;
  log(`image: apt-get download ${missing.map((r) => r.file).join(' ')}`);
  const staging = join(debDir, `download-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging);
  try {
    // apt drops to the _apt user to download when it can: let it write here
    await chmod(staging, 0o777);
    await runChecked('apt-get', ['download', ...missing.map((r) => r.package)], { cwd: staging, timeoutMs: 300_000 });
    for (const ref of missing) {
      const got = join(staging, ref.file);
      if ((await fileSha256(got)) !== ref.sha256) throw new ClusterError(`${ref.file}: sha256 differs from the lists`);
      await rename(got, join(debDir, ref.file));
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Extract the .debs (the partial ones: only their listed files and copyright) and trim what nothing runs. */
async function assembleBase(root: string, refs: readonly DebRef[], debDir: string): Promise<void> {
  await mkdir(root, { recursive: true });
  // what is in the image, for scanners: one dpkg status entry per package files were taken from (as distroless does)
  const statusDir = join(root, 'var', 'lib', 'dpkg', 'status.d');
  await mkdir(statusDir, { recursive: true });
  for (const ref of refs) {
    const deb = join(debDir, ref.file);
    const control = await runChecked('dpkg-deb', ['--field', deb]);
    await writeFile(
      join(statusDir, ref.package),
      control.replace(/^(Package: .*\n)/, '$1Status: install ok installed\n').replace(/\n*$/, '\n'),
    );
    const only = PARTIAL_PACKAGES[ref.package];
    if (only === undefined) {
      await runChecked('dpkg-deb', ['-x', deb, root]);
      continue;
    }
    const tar = join(dirname(root), `${ref.package}.tar`);
    await runChecked('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" > "$2"', 'sh', deb, tar]);
    await runChecked('tar', ['-x', '-f', tar, '-C', root, ...only, `./usr/share/doc/${ref.package}/copyright`]);
    await rm(tar);
  }
  for (const path of PRUNED) await rm(join(root, path), { recursive: true, force: true });
  const libDir = join(root, 'usr', 'lib', MULTIARCH[process.arch] ?? `${process.arch}-linux-gnu`);
  for (const name of PRUNED_LIBDIRS) await rm(join(libDir, name), { recursive: true, force: true });
  const docDir = join(root, 'usr', 'share', 'doc');
  for (const pkg of await readdir(docDir)) {
    for (const entry of await readdir(join(docDir, pkg))) {
      if (entry !== 'copyright') await rm(join(docDir, pkg, entry), { recursive: true, force: true });
    }
  }
  const etc = join(root, 'etc');
  await mkdir(etc, { recursive: true });
  await writeFile(
    join(etc, 'passwd'),
    'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\n',
  );
  await writeFile(join(etc, 'group'), 'root:x:0:\nnonroot:x:65532:\n');
  await writeFile(join(etc, 'nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
  for (const dir of ['tmp', 'root', 'home/nonroot', 'proc', 'sys', 'dev'])
    await mkdir(join(root, dir), { recursive: true });
  await chmod(join(root, 'tmp'), 0o1777);
  await chmod(join(root, 'root'), 0o700);
  await chown(join(root, 'home', 'nonroot'), 65532, 65532);
  await chmod(join(root, 'home', 'nonroot'), 0o700);
  // the loader's cache, as dpkg's trigger would make it (the image runs no dpkg)
  await runChecked('ldconfig', ['-r', root]);
}

async function assembleNode(root: string, nodeBinary: string): Promise<void> {
  const bin = join(root, 'usr', 'local', 'bin');
  await mkdir(bin, { recursive: true });
  await copyFile(nodeBinary, join(bin, 'node'));
  await chmod(join(bin, 'node'), 0o755);
  // the npm package's bin/node is a hard link into node-<os>-<arch>, which also holds Node's LICENSE
  const candidates = [join(dirname(nodeBinary), '..', 'LICENSE')];
  const platformPackage = join(dirname(nodeBinary), '..', 'node_modules', `node-${process.platform}-${process.arch}`);
  candidates.push(join(platformPackage, 'LICENSE'));
  const license = candidates.find((path) => existsSync(path));
  if (license !== undefined) {
    await mkdir(join(root, 'usr', 'local', 'share', 'doc', 'node'), { recursive: true });
    await copyFile(license, join(root, 'usr', 'local', 'share', 'doc', 'node', 'LICENSE'));
  }
}

/** `npm ci --omit=dev` for these package files, cached in <imageCache>/deps-<hash> (made once per lock). */
async function productionDependencies(
  imageCache: string,
  root: string,
  nodeBinary: string,
  log: (message: string) => void,
): Promise<string> {
  const packageJson = await readFile(join(root, 'package.json'));
  const lock = await readFile(join(root, 'package-lock.json'));
  const dir = join(imageCache, `deps-${sha256(Buffer.concat([packageJson, Buffer.from('\0'), lock])).slice(0, 16)}`);
  if (existsSync(join(dir, 'node_modules', '.package-lock.json'))) return dir;
  log('image: npm ci --omit=dev (production dependencies)');
  const work = `${dir}.tmp-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    await writeFile(join(work, 'package.json'), packageJson);
    await writeFile(join(work, 'package-lock.json'), lock);
    // install scripts run with the image's Node (first on PATH), as in the Dockerfile's node:24 stage
    await runChecked('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: work,
      env: { PATH: `${dirname(nodeBinary)}:${process.env.PATH ?? ''}`, NODE_ENV: 'production' },
      timeoutMs: 600_000,
    });
    // another build may have made the same directory meanwhile (and be copying from it): keep that one
    if (!existsSync(join(dir, 'node_modules', '.package-lock.json'))) {
      await rm(dir, { recursive: true, force: true });
      await rename(work, dir);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return dir;
}

async function assembleDeps(stage: string, depsDir: string): Promise<void> {
  const app = join(stage, APP_DIR);
  await mkdir(dirname(app), { recursive: true });
  await cp(depsDir, app, { recursive: true, verbatimSymlinks: true });
}

async function assembleApp(stage: string, files: readonly AppFile[]): Promise<void> {
  const app = join(stage, APP_DIR);
  for (const file of files) {
    await mkdir(dirname(join(app, file.rel)), { recursive: true });
    await copyFile(file.source, join(app, file.rel));
    await chmod(join(app, file.rel), 0o644);
  }
  const bin = join(stage, 'usr', 'local', 'bin');
  await mkdir(bin, { recursive: true });
  for (const [command, entry] of Object.entries(IMAGE_COMMANDS)) {
    await chmod(join(app, entry), 0o755);
    await symlink(join(APP_DIR, entry), join(bin, command));
  }
}

/**
 * One layer: a tar of `dir`, made by GNU tar (sorted names, every time set to CREATED, numeric owners), so the same
 * content gives the same layer. (Not `umoci insert`: Debian's umoci 0.4.7 leaves the tar footer out of the layers it
 * inserts, umoci#436, fixed in 0.4.8: Go readers accept that, GNU tar and scanners do not.)
 */
async function layerTar(dir: string, tarFile: string): Promise<void> {
  const top = (await readdir(dir)).sort();
  await runChecked(
    'tar',
    [
      '--create',
      '--file',
      tarFile,
      '--directory',
      dir,
      '--format=gnu',
      '--sort=name',
      `--mtime=${CREATED}`,
      '--numeric-owner',
      '--',
      ...top,
    ],
    { timeoutMs: 300_000 },
  );
}

async function umoci(args: string[]): Promise<void> {
  await runChecked('umoci', args, { timeoutMs: 600_000 });
}

/** The manifest digest of `tag` in the layout's index.json, if there. */
export async function layoutManifestDigest(layout: string, tag: string): Promise<string | undefined> {
  const text = await readTextIfExists(join(layout, 'index.json'));
  if (text === undefined) return undefined;
  const index = JSON.parse(text) as { manifests?: { digest?: string; annotations?: Record<string, string> }[] };
  return index.manifests?.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === tag)?.digest;
}

async function buildLayout(
  layout: string,
  tag: string,
  stages: { base: string; node: string; deps: string; app: string },
  version: string,
): Promise<void> {
  const image = `${layout}:build`;
  await umoci(['init', '--layout', layout]);
  await umoci(['new', '--image', image]);
  const layers: [string, string][] = [
    [stages.base, `base: Debian ${[...BASE_PACKAGES].join(' ')}, env from coreutils, nonroot user 65532`],
    [stages.node, 'node: Node 24 from the npm package "node"'],
    [stages.deps, 'deps: npm ci --omit=dev'],
    [stages.app, 'app: dist/src, proto, the commands in /usr/local/bin'],
  ];
  for (const [dir, comment] of layers) {
    const tarFile = `${dir}.tar`;
    await layerTar(dir, tarFile);
    await umoci([
      'raw',
      'add-layer',
      '--image',
      image,
      '--history.created',
      CREATED,
      '--history.created_by',
      'test/cluster/image/build.ts',
      '--history.comment',
      comment,
      tarFile,
    ]);
    await rm(tarFile);
  }
  const config = [
    ...IMAGE_CONFIG.entrypoint.flatMap((part) => ['--config.entrypoint', part]),
    '--config.user',
    IMAGE_CONFIG.user,
    ...Object.entries(IMAGE_CONFIG.env).flatMap(([key, value]) => ['--config.env', `${key}=${value}`]),
    '--config.workingdir',
    IMAGE_CONFIG.workingDir,
    ...IMAGE_CONFIG.exposedPorts.flatMap((port) => ['--config.exposedports', port]),
    '--config.label',
    'org.opencontainers.image.title=kruise-daemon',
    '--config.label',
    `org.opencontainers.image.version=${version}`,
  ];
  await umoci([
    'config',
    '--image',
    image,
    '--tag',
    tag,
    '--architecture',
    architecture(),
    '--os',
    'linux',
    '--created',
    CREATED,
    '--no-history',
    ...config,
  ]);
  await umoci(['rm', '--image', image]);
  await umoci(['gc', '--layout', layout]);
}

/** Remove cached layouts other than `keep` that were not used for a day (several worktrees may share the cache). */
async function pruneOldLayouts(imageCache: string, keep: string): Promise<void> {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of await readdir(imageCache)) {
    if (!name.startsWith('oci-') || join(imageCache, name) === keep) continue;
    const info = await stat(join(imageCache, name)).catch(() => undefined);
    if (info && info.mtimeMs < dayAgo) await rm(join(imageCache, name), { recursive: true, force: true });
  }
}

/** Build the image unless the cache holds one made from the same inputs; returns where it is. */
export async function ensureImage(options: ImageBuildOptions): Promise<BuiltImage> {
  const log = options.log;
  const root = packageRoot();
  const outDir = options.outDir ?? defaultOutDir();
  const imageCache = join(options.cache ?? cacheDir(), 'image');
  const nodeBinary = options.nodeBinary ?? npmNodeBinary(root);
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version?: string };
  const version = pkg.version ?? '0.0.0';

  const refs = await debRefs([...BASE_PACKAGES, ...Object.keys(PARTIAL_PACKAGES)], log);
  const files = await appFiles(root, outDir);
  const inputs = createHash('sha256');
  inputs.update(JSON.stringify({ recipe: RECIPE_VERSION, arch: architecture(), config: IMAGE_CONFIG, IMAGE_COMMANDS }));
  for (const ref of refs) inputs.update(`deb ${ref.file} ${ref.sha256}\n`);
  inputs.update(`node ${await fileSha256(nodeBinary)}\n`);
  for (const name of ['package.json', 'package-lock.json'])
    inputs.update(`${name} ${await fileSha256(join(root, name))}\n`);
  for (const file of files) inputs.update(`${file.rel} ${await fileSha256(file.source)}\n`);
  const key = inputs.digest('hex');
  const tag = `${version}-${key.slice(0, 12)}`;
  const layout = join(imageCache, `oci-${key.slice(0, 16)}`);

  const cached = await layoutManifestDigest(layout, tag);
  if (cached !== undefined) {
    const now = new Date();
    await utimes(layout, now, now); // in use: pruneOldLayouts goes by this time
    return { layout, tag, key, manifestDigest: cached, built: false };
  }

  const started = Date.now();
  log(`image: building ${tag} (umoci, base from Debian .debs, Node ${nodeBinary})`);
  await mkdir(imageCache, { recursive: true });
  await fetchDebs(refs, join(imageCache, 'debs'), log);
  const depsDir = await productionDependencies(imageCache, root, nodeBinary, log);
  const work = join(imageCache, `build-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  try {
    const stages = {
      base: join(work, 'base'),
      node: join(work, 'node'),
      deps: join(work, 'deps'),
      app: join(work, 'app'),
    };
    await assembleBase(stages.base, refs, join(imageCache, 'debs'));
    await assembleNode(stages.node, nodeBinary);
    await assembleDeps(stages.deps, depsDir);
    await assembleApp(stages.app, files);
    const fresh = join(work, 'oci');
    await buildLayout(fresh, tag, stages, version);
    if ((await layoutManifestDigest(layout, tag)) === undefined) {
      // another process may have finished the same build meanwhile: its layout is as good as ours
      await rm(layout, { recursive: true, force: true });
      await rename(fresh, layout);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  await pruneOldLayouts(imageCache, layout);
  const digest = await layoutManifestDigest(layout, tag);
  if (digest === undefined) throw new ClusterError(`image: ${layout} lacks ${tag} after the build`);
  log(`image: built ${tag} in ${Date.now() - started} ms`);
  return { layout, tag, key, manifestDigest: digest, built: true };
}

export interface ImageSizes {
  /** What a pull transfers: the manifest's config and gzip layers. */
  compressedBytes: number;
  /** The layers' tar streams, uncompressed: about what the image takes once unpacked. */
  unpackedBytes: number;
  layers: { digest: string; compressedBytes: number; unpackedBytes: number }[];
}

interface OciDescriptor {
  digest: string;
  size: number;
}

function blobPath(layout: string, digest: string): string {
  const [algorithm, hex] = digest.split(':');
  return join(layout, 'blobs', algorithm ?? 'sha256', hex ?? '');
}

/** Sizes of `tag` in an OCI layout (each layer gunzipped once to count its bytes). */
export async function imageSizes(layout: string, tag: string): Promise<ImageSizes> {
  const digest = await layoutManifestDigest(layout, tag);
  if (digest === undefined) throw new ClusterError(`${layout} has no ${tag}`);
  const manifest = JSON.parse(await readFile(blobPath(layout, digest), 'utf8')) as {
    config: OciDescriptor;
    layers: OciDescriptor[];
  };
  const layers = [];
  for (const layer of manifest.layers) {
    const unpacked = gunzipSync(await readFile(blobPath(layout, layer.digest))).length;
    layers.push({ digest: layer.digest, compressedBytes: layer.size, unpackedBytes: unpacked });
  }
  return {
    compressedBytes: manifest.config.size + layers.reduce((sum, l) => sum + l.compressedBytes, 0),
    unpackedBytes: layers.reduce((sum, l) => sum + l.unpackedBytes, 0),
    layers,
  };
}
