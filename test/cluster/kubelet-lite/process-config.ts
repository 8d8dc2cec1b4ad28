// The config file of one kubelet-lite process (JSON, written by component.ts or by a test): the nodes it runs and
// where everything is. Validated whole; a bad file is an error naming the field.
export interface KubeletLiteConfig {
  /** Node names this process runs (one NodeKubelet each). */
  nodes: string[];
  kubeconfig: string;
  runtimeSocket: string;
  podCgroupParent: string;
  podLogDir: string;
  /** Pod volumes and termination-message files: <stateDir>/pods/<uid>. */
  stateDir: string;
  /** Written (JSON {pid, nodes}) once every node is registered and its pods listed. */
  readyFile: string;
  hostIP: string;
  /** Multiplies kubelet's timers (crash backoff, retry, resync, relist); 1 = kubelet's own. */
  timeScale: number;
}

const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function parseKubeletLiteConfig(text: string): KubeletLiteConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`kubelet-lite config is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error('kubelet-lite config must be a JSON object');
  const o = raw as Record<string, unknown>;
  const str = (key: string, absolute = true): string => {
    const v = o[key];
    if (typeof v !== 'string' || v === '') throw new Error(`kubelet-lite config: ${key} must be a non-empty string`);
    if (absolute && !v.startsWith('/'))
      throw new Error(`kubelet-lite config: ${key} must be an absolute path, got ${v}`);
    return v;
  };
  const nodes = o.nodes;
  if (!Array.isArray(nodes) || nodes.length === 0)
    throw new Error('kubelet-lite config: nodes must be a non-empty array');
  for (const n of nodes) {
    if (typeof n !== 'string' || n.length > 253 || !NODE_NAME.test(n)) {
      throw new Error(`kubelet-lite config: node name ${JSON.stringify(n)} is not a DNS subdomain`);
    }
  }
  if (new Set(nodes).size !== nodes.length) throw new Error('kubelet-lite config: node names repeat');
  const timeScale = o.timeScale ?? 1;
  if (typeof timeScale !== 'number' || !(timeScale > 0) || timeScale > 10) {
    throw new Error(`kubelet-lite config: timeScale must be a number in (0, 10], got ${JSON.stringify(timeScale)}`);
  }
  return {
    nodes: nodes as string[],
    kubeconfig: str('kubeconfig'),
    runtimeSocket: str('runtimeSocket'),
    podCgroupParent: str('podCgroupParent'),
    podLogDir: str('podLogDir'),
    stateDir: str('stateDir'),
    readyFile: str('readyFile'),
    hostIP: str('hostIP', false),
    timeScale,
  };
}
