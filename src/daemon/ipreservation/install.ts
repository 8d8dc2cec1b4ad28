// Installs the plugin on the node: a tiny shell wrapper `<cni-bin-dir>/kruise-ipam` that execs a Node binary on the
// compiled plugin (containerd's PATH may hold another Node as `node`, so no `#!/usr/bin/env node`), and optionally a
// conflist (bridge + kruise-ipam with the pod-annotations capability). Two modes:
// - in-place: the wrapper points at this agent's own Node and dist (the agent runs on the host: tests, dev);
// - copy: Node and the plugin's modules are copied to `<cni-bin-dir>/kruise-ipam.d/` first, so the plugin runs on the
//   host when the agent runs in a container whose files the host cannot see (the DaemonSet).
// Files are replaced atomically (temp + rename) and only when their content changes.
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { POD_ANNOTATIONS_CAPABILITY } from '../../cni/config.js';

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

/** The plugin's own modules, relative to the outDir: its entry and src/cni (it imports nothing else of ours). */
export function pluginModules(root = outDir()): string[] {
  const cni = readdirSync(join(root, 'src', 'cni')).filter((f) => f.endsWith('.js'));
  return ['src/cli/kruise-ipam.js', ...cni.map((f) => `src/cni/${f}`)];
}

/** Copy Node and the plugin into `<binDir>/kruise-ipam.d/` and point the wrapper there. */
export function installPluginCopy(
  binDir: string,
  nodePath = process.execPath,
  root = outDir(),
): { path: string; changed: boolean } {
  const home = join(binDir, `${PLUGIN_NAME}.d`);
  const lib = join(home, 'lib');
  let changed = false;
  mkdirSync(lib, { recursive: true, mode: 0o755 });
  // Node: copied when its size or mtime differ from the last copy (a stamp beside it)
  const source = statSync(nodePath);
  const stamp = `${source.size}:${source.mtimeMs}\n`;
  const nodeCopy = join(home, 'node');
  let stampNow = '';
  try {
    stampNow = readFileSync(join(home, 'node.stamp'), 'utf8');
  } catch {
    // first install
  }
  if (stampNow !== stamp || !statSync(nodeCopy, { throwIfNoEntry: false })) {
    const temp = `${nodeCopy}.tmp-${process.pid}`;
    copyFileSync(nodePath, temp);
    chmodSync(temp, 0o755);
    renameSync(temp, nodeCopy);
    writeFileAtomic(join(home, 'node.stamp'), stamp, 0o644);
    changed = true;
  }
  changed = writeFileAtomic(join(lib, 'package.json'), '{"type":"module"}\n', 0o644) || changed;
  for (const rel of pluginModules(root)) {
    const target = join(lib, rel);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    changed = writeFileAtomic(target, readFileSync(join(root, rel), 'utf8'), 0o644) || changed;
  }
  const wrapper = installPlugin(binDir, nodeCopy, join(lib, 'src', 'cli', 'kruise-ipam.js'));
  return { path: wrapper.path, changed: changed || wrapper.changed };
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
