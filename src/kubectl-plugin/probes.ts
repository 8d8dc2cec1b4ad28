// `probes`: the custom probes of the NodePodProbes (PodProbeMarker), one row per node, pod and probe, with the state,
// last probe time and message the node's agent reported ("Unknown" with no time while it reported none).
import { NODE_POD_PROBES, type NodePodProbe } from '../api/nodepodprobe.js';
import { printJson, type PluginContext } from './context.js';
import { renderTable } from './table.js';

export interface ProbeRow {
  node: string;
  /** namespace/name */
  pod: string;
  probe: string;
  container: string;
  state: string;
  lastProbeTime?: string;
  message?: string;
}

export function probeRows(items: readonly NodePodProbe[]): ProbeRow[] {
  const rows: ProbeRow[] = [];
  for (const npp of [...items].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    const node = npp.metadata.name ?? '';
    const statuses = npp.status?.podProbeStatuses ?? [];
    for (const pod of npp.spec?.podProbes ?? []) {
      const status = statuses.find((s) => s.uid === pod.uid);
      for (const probe of pod.probes ?? []) {
        const state = status?.probeStates?.find((s) => s.name === probe.name);
        rows.push({
          node,
          pod: `${pod.namespace}/${pod.name}`,
          probe: probe.name,
          container: probe.containerName,
          state: state?.state ?? 'Unknown',
          ...(state?.lastProbeTime && { lastProbeTime: state.lastProbeTime }),
          ...(state?.message && { message: state.message }),
        });
      }
    }
  }
  return rows;
}

export function renderProbeRows(rows: readonly ProbeRow[]): string {
  if (rows.length === 0) return 'No custom probes on any NodePodProbe.\n';
  return renderTable(
    ['NODE', 'POD', 'PROBE', 'CONTAINER', 'STATE', 'LAST PROBE', 'MESSAGE'],
    rows.map((r) => [
      r.node,
      r.pod,
      r.probe,
      r.container,
      r.state,
      r.lastProbeTime ?? '',
      (r.message ?? '').trim().split('\n')[0] ?? '',
    ]),
  );
}

export async function runProbes(ctx: PluginContext, node: string | undefined): Promise<number> {
  const items = node
    ? [await ctx.api.get<NodePodProbe>(NODE_POD_PROBES, node)]
    : (await ctx.api.list<NodePodProbe>(NODE_POD_PROBES)).items;
  const rows = probeRows(items);
  if (ctx.global.output === 'json') printJson(ctx, rows);
  else ctx.stdout.write(renderProbeRows(rows));
  return 0;
}
