// Installs the plugin on the node: a tiny shell wrapper `<cni-bin-dir>/kruise-ipam` that execs this agent's Node
// binary on the compiled plugin (containerd's PATH may hold another Node as `node`, so no `#!/usr/bin/env node`),
// and optionally a conflist (bridge + kruise-ipam with the pod-annotations capability). Files are replaced
// atomically (temp + rename) and only when their content changes.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
