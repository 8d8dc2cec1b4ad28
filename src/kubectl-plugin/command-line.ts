// The plugin's command line: `kubectl kruise-node <command> [args] [flags]`. Every problem is a UsageError with one
// line naming the argument, so the entry point prints it with the usage hint and exits 2.
import { parseArgs } from 'node:util';
import { validateImageReference } from '../api/image-reference.js';
import { parseArgsProblem } from '../util/parse-args-problem.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type OutputFormat = 'table' | 'json';

export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  output: OutputFormat;
}

export interface AgentEndpoint {
  node: string;
  url: string;
}

/** Where `ips` found its agents: named with --agent, named in $KRUISE_NODE_AGENTS, or looked for as pods. */
export type AgentSource = '--agent' | typeof AGENTS_ENV | 'pods';

export type PluginCommand =
  | { kind: 'help' }
  | { kind: 'nodeimages'; node?: string }
  | { kind: 'probes'; node?: string }
  | {
      kind: 'pull';
      image: string;
      nodes: string[];
      name?: string;
      follow: boolean;
      timeoutMs: number;
    }
  | {
      kind: 'recreate';
      pod: string;
      containers: string[];
      ordered: boolean;
      name?: string;
      follow: boolean;
      timeoutMs: number;
    }
  | {
      kind: 'ips';
      node?: string;
      agents: AgentEndpoint[];
      agentSource: AgentSource;
      agentNamespace: string;
      agentPort: number;
    };

export interface ParsedPluginCommandLine {
  global: GlobalOptions;
  command: PluginCommand;
}

export const DEFAULT_FOLLOW_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_AGENT_NAMESPACE = 'kruise-system';
export const DEFAULT_AGENT_PORT = 10221;
/** The default of --agent (NODE=URL,NODE=URL); `npm run dev`'s dev.env sets it to its agents. */
export const AGENTS_ENV = 'KRUISE_NODE_AGENTS';

export const PLUGIN_USAGE = `Usage: kubectl kruise-node <command> [args] [flags]

kruise-daemon's node-side objects from kubectl: images pre-pulled on nodes, in-place container restarts,
pod IP reservations, custom probes.

Commands:
  nodeimages [--node NAME]
        every image tag the NodeImages ask for, per node, with its pull phase
  probes [--node NAME]
        every custom probe the NodePodProbes ask for (PodProbeMarker), per node and pod, with the state,
        last probe time and message its node's agent reported
  pull IMAGE [--nodes N1,N2] [--name NAME] [--timeout DUR] [--no-follow]
        create an ImagePullJob for IMAGE (on every node, or on --nodes) and follow it until it completes
  recreate POD -c CONTAINER [-c CONTAINER...] [--ordered] [--name NAME] [--timeout DUR] [--no-follow]
        create a ContainerRecreateRequest for containers of POD and follow it until it completes
  ips [--node NAME] [--agent NODE=URL[,NODE=URL...]] [--agent-namespace NS] [--agent-port PORT]
        IP reservations per node and network (from each agent's /metrics, through the API server's pod
        proxy, or from --agent URLs given directly (env KRUISE_NODE_AGENTS)), and the pods that ask for a
        reserved IP

Flags:
  --kubeconfig PATH      kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)
  --context NAME         kubeconfig context (default: its current-context)
  -n, --namespace NS     namespace of the ImagePullJob / the pod (default: the context's, else default)
  -o, --output FORMAT    table (default) or json
  --timeout DUR          how long pull/recreate follow the object (default 10m; 30s, 5m, 1h)
  --no-follow            create the object, print its name and return
  -c, --container NAME   (recreate) a container to recreate; repeat it for several, in order
  -h, --help             print this help

Exit codes: 0 done (every node pulled, every container recreated), 1 failed or timed out, 2 bad usage.`;

const FLAGS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  output: { type: 'string', short: 'o' },
  node: { type: 'string' },
  nodes: { type: 'string', multiple: true },
  name: { type: 'string' },
  timeout: { type: 'string' },
  'no-follow': { type: 'boolean' },
  container: { type: 'string', short: 'c', multiple: true },
  ordered: { type: 'boolean' },
  agent: { type: 'string', multiple: true },
  'agent-namespace': { type: 'string' },
  'agent-port': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type FlagName = keyof typeof FLAGS;

/** Flags each command accepts besides the global ones. */
const COMMAND_FLAGS: Record<Exclude<PluginCommand['kind'], 'help'>, readonly FlagName[]> = {
  nodeimages: ['node'],
  probes: ['node'],
  pull: ['nodes', 'name', 'timeout', 'no-follow'],
  recreate: ['container', 'ordered', 'name', 'timeout', 'no-follow'],
  ips: ['node', 'agent', 'agent-namespace', 'agent-port'],
};
const GLOBAL_FLAGS: readonly FlagName[] = ['kubeconfig', 'context', 'namespace', 'output', 'help'];

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function checkName(what: string, value: string, pattern: RegExp = DNS_SUBDOMAIN, max = 253): string {
  if (value.length > max || !pattern.test(value)) {
    throw new UsageError(`${what} ${JSON.stringify(value)} is not a valid name (lower-case letters, digits, '-')`);
  }
  return value;
}

/** "500ms", "30s", "10m", "1h", or a bare number of seconds; positive. */
export function parseFollowTimeout(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const ms = m ? Number(m[1]) * unit[(m[2] ?? 's') as keyof typeof unit] : NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new UsageError(`--timeout ${JSON.stringify(text)} is not a positive duration (e.g. 30s, 5m, 1h)`);
  }
  return ms;
}

function parseAgent(text: string, source: AgentSource): AgentEndpoint {
  const i = text.indexOf('=');
  if (i <= 0)
    throw new UsageError(`${source} ${JSON.stringify(text)}: expected NODE=URL (e.g. node-1=http://10.0.0.1:10221)`);
  const node = checkName(`${source} node`, text.slice(0, i));
  const url = text.slice(i + 1);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${source} ${node}=${url}: not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${source} ${node}=${url}: only http and https URLs`);
  }
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/metrics';
  return { node, url: parsed.toString() };
}

/** NODE=URL[,NODE=URL...] values, as --agent (repeatable) or $KRUISE_NODE_AGENTS give them. */
function parseAgents(values: readonly string[], source: AgentSource): AgentEndpoint[] {
  const agents = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((v) => parseAgent(v, source));
  if (agents.length === 0) throw new UsageError(`${source} names no agent (expected NODE=URL[,NODE=URL...])`);
  return agents;
}

/**
 * The agents `ips` reads: those named with --agent; else, unless --agent-namespace or --agent-port ask for the
 * agent pods, those named in $KRUISE_NODE_AGENTS; else none (the agent pods are looked for).
 */
function agentsOf(
  values: { agent?: string[]; 'agent-namespace'?: string; 'agent-port'?: string },
  env: NodeJS.ProcessEnv,
): { agents: AgentEndpoint[]; agentSource: AgentSource } {
  if (values.agent !== undefined) return { agents: parseAgents(values.agent, '--agent'), agentSource: '--agent' };
  const fromEnv = env[AGENTS_ENV]?.trim();
  const podsAsked = values['agent-namespace'] !== undefined || values['agent-port'] !== undefined;
  if (fromEnv && !podsAsked) return { agents: parseAgents([fromEnv], AGENTS_ENV), agentSource: AGENTS_ENV };
  return { agents: [], agentSource: 'pods' };
}

export function parsePluginCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ParsedPluginCommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(parseArgsProblem(err));
  }
  const { values, positionals } = parsed;
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') {
    throw new UsageError(`--output ${JSON.stringify(output)}: expected table or json`);
  }
  const global: GlobalOptions = { output };
  if (values.kubeconfig !== undefined) global.kubeconfig = values.kubeconfig;
  if (values.context !== undefined) global.context = values.context;
  if (values.namespace !== undefined) global.namespace = checkName('--namespace', values.namespace, DNS_LABEL, 63);

  const [name, ...args] = positionals;
  if (values.help || name === undefined || name === 'help') return { global, command: { kind: 'help' } };
  if (!Object.hasOwn(COMMAND_FLAGS, name)) {
    throw new UsageError(`unknown command ${JSON.stringify(name)} (nodeimages, probes, pull, recreate, ips)`);
  }
  const kind = name as keyof typeof COMMAND_FLAGS;
  const allowed = new Set<FlagName>([...GLOBAL_FLAGS, ...COMMAND_FLAGS[kind]]);
  for (const flag of Object.keys(values) as FlagName[]) {
    if (!allowed.has(flag)) throw new UsageError(`--${flag} is not a flag of ${kind}`);
  }
  const follow = values['no-follow'] !== true;
  const timeoutMs = values.timeout === undefined ? DEFAULT_FOLLOW_TIMEOUT_MS : parseFollowTimeout(values.timeout);
  const jobName = values.name === undefined ? undefined : checkName('--name', values.name);

  switch (kind) {
    case 'nodeimages':
    case 'probes': {
      if (args.length > 0) throw new UsageError(`${kind} takes no arguments, got ${args.join(' ')}`);
      return {
        global,
        command: { kind, ...(values.node !== undefined && { node: checkName('--node', values.node) }) },
      };
    }
    case 'pull': {
      if (args.length !== 1) throw new UsageError('pull takes exactly one IMAGE');
      const image = args[0]!;
      const problem = validateImageReference(image);
      if (problem) throw new UsageError(`IMAGE: ${problem}`);
      const nodes = (values.nodes ?? [])
        .flatMap((v) => v.split(','))
        .map((n) => n.trim())
        .filter((n) => n !== '')
        .map((n) => checkName('--nodes', n));
      return {
        global,
        command: { kind, image, nodes: [...new Set(nodes)], follow, timeoutMs, ...(jobName && { name: jobName }) },
      };
    }
    case 'recreate': {
      if (args.length !== 1) throw new UsageError('recreate takes exactly one POD');
      const pod = checkName('POD', args[0]!);
      const containers = (values.container ?? []).map((c) => checkName('-c', c, DNS_LABEL, 63));
      if (containers.length === 0) throw new UsageError('recreate needs at least one -c CONTAINER');
      if (new Set(containers).size !== containers.length) throw new UsageError('-c names a container twice');
      return {
        global,
        command: {
          kind,
          pod,
          containers,
          ordered: values.ordered === true,
          follow,
          timeoutMs,
          ...(jobName && { name: jobName }),
        },
      };
    }
    case 'ips': {
      if (args.length > 0) throw new UsageError(`ips takes no arguments, got ${args.join(' ')}`);
      const port = values['agent-port'] === undefined ? DEFAULT_AGENT_PORT : Number(values['agent-port']);
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        throw new UsageError(`--agent-port ${JSON.stringify(values['agent-port'])}: expected a port from 1 to 65535`);
      }
      return {
        global,
        command: {
          kind,
          ...agentsOf(values, env),
          agentNamespace: checkName(
            '--agent-namespace',
            values['agent-namespace'] ?? DEFAULT_AGENT_NAMESPACE,
            DNS_LABEL,
            63,
          ),
          agentPort: port,
          ...(values.node !== undefined && { node: checkName('--node', values.node) }),
        },
      };
    }
  }
}
