// `ips`: the IP reservations of kruise-ipam across nodes. What each agent publishes is its /metrics
// (kruise_daemon_ipam_* gauges and counters per CNI network; src/daemon/ipreservation/metrics.ts), read through the
// API server's pod proxy from the agent pods (namespace kruise-system, label control-plane=daemon, port 10221), or
// directly from URLs given with --agent NODE=URL or $KRUISE_NODE_AGENTS (agents that do not run as pods, e.g.
// `npm run dev`). The pods that ask for a reserved IP (annotation io.kubernetes.cri/reserved-ip-duration) come from
// the API. The address-level detail stays on the node: `kruise-daemon ipam ls` there. No agent found, or none for
// the --node asked, is a failure (exit 1) that says where it looked and how to name the agents.
import { RESERVED_IP_DURATION_ANNOTATION } from '../api/constants.js';
import type { WirePod } from '../api/wire.js';
import { isNotFound } from '../kube/errors.js';
import { CoreResources } from '../kube/resource.js';
import { AGENTS_ENV, type AgentEndpoint, type AgentSource } from './command-line.js';
import { printJson, type PluginContext } from './context.js';
import { parsePrometheusText, type Sample } from './prometheus-text.js';
import { renderTable } from './table.js';
import { errorMessage } from '../util/error-message.js';

export const AGENT_POD_SELECTOR = 'control-plane=daemon';

/** The metrics read per network; absent counters read as 0. */
export const IPAM_METRICS = {
  held: 'kruise_daemon_ipam_allocated_ips',
  reserved: 'kruise_daemon_ipam_reserved_ips',
  reused: 'kruise_daemon_ipam_reservations_reused_total',
  expired: 'kruise_daemon_ipam_reservations_expired_total',
} as const;

export interface NetworkReservations {
  network: string;
  held: number;
  reserved: number;
  reused: number;
  expired: number;
}

export interface NodeReservations {
  node: string;
  source: string;
  networks: NetworkReservations[];
  /** Why the agent could not be read (its row then has no networks). */
  error?: string;
  /** The agent answered but runs without --ipam (no kruise_daemon_ipam_* metric). */
  ipamOff?: boolean;
}

export interface ReservingPod {
  namespace: string;
  name: string;
  node: string;
  ip: string;
  minutes: string;
  phase: string;
}

export function networksFromMetrics(samples: readonly Sample[]): NetworkReservations[] {
  const byNetwork = new Map<string, NetworkReservations>();
  const keys = Object.keys(IPAM_METRICS) as (keyof typeof IPAM_METRICS)[];
  for (const sample of samples) {
    const key = keys.find((k) => IPAM_METRICS[k] === sample.name);
    const network = sample.labels.network;
    if (!key || network === undefined) continue;
    const entry = byNetwork.get(network) ?? { network, held: 0, reserved: 0, reused: 0, expired: 0 };
    entry[key] = sample.value;
    byNetwork.set(network, entry);
  }
  return [...byNetwork.values()].sort((a, b) => a.network.localeCompare(b.network));
}

/** An agent with --ipam declares its kruise_daemon_ipam_* metrics (HELP/TYPE) even before any network has a sample. */
const IPAM_METRIC_DECLARED = /^# (?:HELP|TYPE) kruise_daemon_ipam_/m;

function reservationsFromText(node: string, source: string, text: string): NodeReservations {
  const samples = parsePrometheusText(text);
  const networks = networksFromMetrics(samples);
  const ipamOff = !IPAM_METRIC_DECLARED.test(text) && !samples.some((s) => s.name.startsWith('kruise_daemon_ipam_'));
  return { node, source, networks, ...(ipamOff && { ipamOff }) };
}

function message(err: unknown): string {
  return errorMessage(err).split('\n')[0] ?? '';
}

async function readAgentEndpoint(ctx: PluginContext, agent: AgentEndpoint): Promise<NodeReservations> {
  try {
    return reservationsFromText(agent.node, agent.url, await ctx.fetchText(agent.url));
  } catch (err) {
    return { node: agent.node, source: agent.url, networks: [], error: message(err) };
  }
}

async function readAgentPods(ctx: PluginContext, namespace: string, port: number): Promise<NodeReservations[]> {
  const pods = (await ctx.api.list<WirePod>(CoreResources.pods, { namespace, labelSelector: AGENT_POD_SELECTOR }))
    .items;
  return await Promise.all(
    pods.map(async (pod): Promise<NodeReservations> => {
      const name = pod.metadata?.name ?? '';
      const node = pod.spec?.nodeName ?? '';
      const path = `/api/v1/namespaces/${namespace}/pods/${encodeURIComponent(`${name}:${port}`)}/proxy/metrics`;
      const source = `pod ${namespace}/${name}`;
      try {
        const res = await ctx.api.transport.request({ method: 'GET', path, headers: { Accept: 'text/plain' } });
        if (res.status < 200 || res.status > 299) {
          return { node, source, networks: [], error: `pod proxy answered ${res.status}` };
        }
        return reservationsFromText(node, source, res.body);
      } catch (err) {
        return { node, source, networks: [], error: message(err) };
      }
    }),
  );
}

export function reservingPods(pods: readonly WirePod[]): ReservingPod[] {
  return pods
    .filter((p) => p.metadata?.annotations?.[RESERVED_IP_DURATION_ANNOTATION] !== undefined)
    .map((p) => ({
      namespace: p.metadata?.namespace ?? '',
      name: p.metadata?.name ?? '',
      node: p.spec?.nodeName ?? '',
      ip: p.status?.podIP ?? '',
      minutes: p.metadata?.annotations?.[RESERVED_IP_DURATION_ANNOTATION] ?? '',
      phase: p.status?.phase ?? '',
    }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

export function renderReservations(nodes: readonly NodeReservations[], pods: readonly ReservingPod[]): string {
  const nodeRows: string[][] = [];
  for (const n of nodes) {
    if (n.error) nodeRows.push([n.node, '-', '', '', '', '', `unreachable: ${n.error}`]);
    else if (n.ipamOff) nodeRows.push([n.node, '-', '', '', '', '', 'agent runs without --ipam']);
    else if (n.networks.length === 0) nodeRows.push([n.node, '-', '0', '0', '0', '0', 'no kruise-ipam network yet']);
    for (const w of n.networks) {
      nodeRows.push([n.node, w.network, String(w.held), String(w.reserved), String(w.reused), String(w.expired), '']);
    }
  }
  const nodesText = renderTable(['NODE', 'NETWORK', 'HELD', 'RESERVED', 'REUSED', 'EXPIRED', 'NOTE'], nodeRows);
  const podsText =
    pods.length === 0
      ? `No pod asks for a reserved IP (annotation ${RESERVED_IP_DURATION_ANNOTATION}).\n`
      : renderTable(
          ['NAMESPACE', 'POD', 'NODE', 'IP', 'RESERVED-MINUTES', 'PHASE'],
          pods.map((p) => [p.namespace, p.name, p.node || '<none>', p.ip || '<none>', p.minutes, p.phase]),
        );
  return `${nodesText}\n${podsText}`;
}

export interface IpsCommand {
  node?: string;
  agents: AgentEndpoint[];
  agentSource: AgentSource;
  agentNamespace: string;
  agentPort: number;
}

/** Where the agents were looked for, for the messages that say none was found. */
function lookedAt(command: IpsCommand): string {
  switch (command.agentSource) {
    case '--agent':
      return 'among the --agent URLs';
    case AGENTS_ENV:
      return `among $${AGENTS_ENV}`;
    case 'pods':
      return `among the pods labelled ${AGENT_POD_SELECTOR} in ${command.agentNamespace}`;
  }
}

/** No agent at all (only the pod lookup can come back empty): what was looked for, and how to name agents. */
export function noAgentMessage(command: IpsCommand): string {
  return (
    `no kruise-daemon agent found: no pod labelled ${AGENT_POD_SELECTOR} in ${command.agentNamespace}. ` +
    `Agents installed in another namespace: --agent-namespace NS. Agents that are not pods (npm run dev): ` +
    `--agent NODE=URL[,NODE=URL...], or set ${AGENTS_ENV}=NODE=URL,... (\`source .cluster/dev.env\` does)`
  );
}

export async function runIps(ctx: PluginContext, command: IpsCommand): Promise<number> {
  if (command.node !== undefined) {
    try {
      await ctx.api.get(CoreResources.nodes, command.node);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      ctx.stderr.write(`node ${command.node} not found\n`);
      return 1;
    }
  }
  const [agents, pods] = await Promise.all([
    command.agentSource === 'pods'
      ? readAgentPods(ctx, command.agentNamespace, command.agentPort)
      : Promise.all(command.agents.map((a) => readAgentEndpoint(ctx, a))),
    ctx.api.list<WirePod>(CoreResources.pods).then((l) => reservingPods(l.items)),
  ]);
  if (agents.length === 0) {
    ctx.stderr.write(`${noAgentMessage(command)}\n`);
    return 1;
  }
  const nodes = agents
    .filter((a) => command.node === undefined || a.node === command.node)
    .sort((a, b) => a.node.localeCompare(b.node));
  if (nodes.length === 0) {
    const found = [...new Set(agents.map((a) => a.node))].sort().join(', ');
    ctx.stderr.write(`no kruise-daemon agent for node ${command.node} ${lookedAt(command)} (agents for: ${found})\n`);
    return 1;
  }
  const shownPods = pods.filter((p) => command.node === undefined || p.node === command.node);
  if (ctx.global.output === 'json') printJson(ctx, { nodes, pods: shownPods });
  else ctx.stdout.write(renderReservations(nodes, shownPods));
  return nodes.some((n) => n.error) ? 1 : 0;
}
