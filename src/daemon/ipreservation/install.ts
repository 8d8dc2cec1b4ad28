// Installs the plugin on the node: a tiny shell wrapper `<cni-bin-dir>/kruise-ipam` that execs a Node binary on the
// compiled plugin (containerd's PATH may hold another Node as `node`, so no `#!/usr/bin/env node`), and optionally a
// conflist (bridge + kruise-ipam with the pod-annotations capability). The plugin's modules are joined into one file
// `<cni-bin-dir>/kruise-ipam.d/kruise-ipam.mjs` (bundle.ts), so Node loads one module per call. Two modes:
// - in-place: the wrapper runs this agent's own Node (the agent runs on the host: tests, dev);
// - copy: Node is copied to `<cni-bin-dir>/kruise-ipam.d/node` too, so the plugin runs on the host when the agent
//   runs in a container whose files the host cannot see (the DaemonSet).
// Files are replaced atomically (temp + rename) and only when their content changes.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { POD_ANNOTATIONS_CAPABILITY } from '../../cni/config.js';
import { bundlePlugin, BundleError, pluginModuleTree } from './bundle.js';

export const PLUGIN_NAME = 'kruise-ipam';
export const CONFLIST_NAME = '10-kruise-ipam.conflist';

/** The compiled plugin entry beside this file (works from any outDir). */
export function pluginEntry(): string {
  return fileURLToPath(new URL('../../cli/kruise-ipam.js', import.meta.url));
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function wrapperScript(nodePath: string, entry: string): string {
  return [
    '#!/bin/sh',
    '# kruise-ipam CNI IPAM plugin, installed by kruise-daemon',
    `exec ${shellQuote(nodePath)} ${shellQuote(entry)} "$@"`,
    '',
  ].join('\n');
}

/** Write `path` atomically with `mode` unless it already has this content; returns whether it changed. */
export function writeFileAtomic(path: string, content: string, mode: number): boolean {
  try {
    if (readFileSync(path, 'utf8') === content) {
      chmodSync(path, mode);
      return false;
    }
  } catch {
    // absent: write it
  }
  const temp = `${path}.tmp-${process.pid}`;
  writeFileSync(temp, content, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
  return true;
}

export function installPlugin(
  binDir: string,
  nodePath = process.execPath,
  entry = pluginEntry(),
): { path: string; changed: boolean } {
  mkdirSync(binDir, { recursive: true });
  const path = join(binDir, PLUGIN_NAME);
  return { path, changed: writeFileAtomic(path, wrapperScript(nodePath, entry), 0o755) };
}

/** The compiled tree this file belongs to: <outDir>/src/daemon/ipreservation/install.js → <outDir>. */
function outDir(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

/** The plugin's own modules, relative to the outDir: its entry and every module it imports (src/cni, src/util). */
export function pluginModules(root = outDir()): string[] {
  return pluginModuleTree(root);
}

export interface InstallOutcome {
  /** The wrapper. */
  path: string;
  /** The script the wrapper runs. */
  entry: string;
  /** Whether it runs the single-file bundle (else the module tree). */
  bundled: boolean;
  changed: boolean;
}

/**
 * Install the plugin with its modules joined into one file (`<binDir>/kruise-ipam.d/kruise-ipam.mjs`): fewer files
 * for Node to load at every call. `copyNode`: also copy Node there (the agent in a container). If the compiled
 * modules cannot be bundled, the module tree is used instead (copied with `copyNode`, else in place).
 */
export function installPluginBundled(
  binDir: string,
  options: { copyNode: boolean; nodePath?: string; root?: string; onFallback?: (why: string) => void },
): InstallOutcome {
  const root = options.root ?? outDir();
  const nodePath = options.nodePath ?? process.execPath;
  const home = join(binDir, `${PLUGIN_NAME}.d`);
  mkdirSync(home, { recursive: true, mode: 0o755 });
  let bundle: string;
  try {
    bundle = bundlePlugin(root);
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    options.onFallback?.(err.message);
    if (options.copyNode) return { ...installPluginCopy(binDir, nodePath, root), bundled: false };
    const entry = join(root, 'src', 'cli', 'kruise-ipam.js');
    return { ...installPlugin(binDir, nodePath, entry), entry, bundled: false };
  }
  const entry = join(home, `${PLUGIN_NAME}.mjs`);
  let changed = writeFileAtomic(entry, bundle, 0o644);
  const node = options.copyNode ? copyNode(home, nodePath) : { path: nodePath, changed: false };
  const wrapper = installPlugin(binDir, node.path, entry);
  changed = changed || node.changed || wrapper.changed;
  return { path: wrapper.path, entry, bundled: true, changed };
}

/** Copy Node to `<home>/node` when its size or mtime differ from the last copy (a stamp beside it). */
function copyNode(home: string, nodePath: string): { path: string; changed: boolean } {
  const source = statSync(nodePath);
  const stamp = `${source.size}:${source.mtimeMs}\n`;
  const nodeCopy = join(home, 'node');
  let stampNow = '';
  try {
    stampNow = readFileSync(join(home, 'node.stamp'), 'utf8');
  } catch {
    // first install
  }
  if (stampNow === stamp && statSync(nodeCopy, { throwIfNoEntry: false })) return { path: nodeCopy, changed: false };
  const temp = `${nodeCopy}.tmp-${process.pid}`;
  copyFileSync(nodePath, temp);
  chmodSync(temp, 0o755);
  renameSync(temp, nodeCopy);
  writeFileAtomic(join(home, 'node.stamp'), stamp, 0o644);
  return { path: nodeCopy, changed: true };
}

/** Copy Node and the plugin's module tree into `<binDir>/kruise-ipam.d/` and point the wrapper there. */
export function installPluginCopy(
  binDir: string,
  nodePath = process.execPath,
  root = outDir(),
): { path: string; entry: string; changed: boolean } {
  const home = join(binDir, `${PLUGIN_NAME}.d`);
  const lib = join(home, 'lib');
  mkdirSync(lib, { recursive: true, mode: 0o755 });
  let changed = copyNode(home, nodePath).changed;
  changed = writeFileAtomic(join(lib, 'package.json'), '{"type":"module"}\n', 0o644) || changed;
  for (const rel of pluginModules(root)) {
    const target = join(lib, rel);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    changed = writeFileAtomic(target, readFileSync(join(root, rel), 'utf8'), 0o644) || changed;
  }
  const entry = join(lib, 'src', 'cli', 'kruise-ipam.js');
  const wrapper = installPlugin(binDir, join(home, 'node'), entry);
  return { path: wrapper.path, entry, changed: changed || wrapper.changed };
}

export interface ConflistSpec {
  networkName: string;
  bridge: string;
  subnets: string[];
  dataDir: string;
  /** Extra ipam fields (tests: testOnlyMinuteMs). */
  ipamExtra?: Record<string, unknown>;
  /** Bridge plugin fields (default isGateway true, ipMasq true, hairpinMode true). */
  bridgeExtra?: Record<string, unknown>;
}

export function conflist(spec: ConflistSpec): string {
  const doc = {
    cniVersion: '1.0.0',
    name: spec.networkName,
    plugins: [
      {
        type: 'bridge',
        bridge: spec.bridge,
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ...spec.bridgeExtra,
        capabilities: { [POD_ANNOTATIONS_CAPABILITY]: true },
        ipam: {
          type: PLUGIN_NAME,
          ranges: spec.subnets.map((subnet) => [{ subnet }]),
          dataDir: spec.dataDir,
          ...spec.ipamExtra,
        },
      },
    ],
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function installConflist(
  confDir: string,
  spec: ConflistSpec,
  name = CONFLIST_NAME,
): { path: string; changed: boolean } {
  mkdirSync(confDir, { recursive: true });
  const path = join(confDir, name);
  return { path, changed: writeFileAtomic(path, conflist(spec), 0o644) };
}
