// `nodeimages`: every tag the NodeImages ask for, one row per node and tag, with the phase the agent reported.
import { NODE_IMAGES, type NodeImage } from '../api/nodeimage.js';
import { printJson, type PluginContext } from './context.js';
import { renderTable } from './table.js';

export interface NodeImageRow {
  node: string;
  image: string;
  tag: string;
  /** The agent's phase; "Waiting" while the tag has no status (or the status is for an older version). */
  phase: string;
  progress?: number;
  message?: string;
  completed?: string;
}

export function nodeImageRows(items: readonly NodeImage[]): NodeImageRow[] {
  const rows: NodeImageRow[] = [];
  for (const ni of [...items].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    const node = ni.metadata.name ?? '';
    const images = ni.spec?.images ?? {};
    for (const image of Object.keys(images).sort()) {
      for (const spec of images[image]?.tags ?? []) {
        const status = ni.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === spec.tag);
        const current = status && (spec.version === undefined || status.version === spec.version);
        rows.push({
          node,
          image,
          tag: spec.tag,
          phase: current ? status.phase : 'Waiting',
          ...(current && status.progress !== undefined && { progress: status.progress }),
          ...(current && status.message && { message: status.message }),
          ...(current && status.completionTime && { completed: status.completionTime }),
        });
      }
    }
  }
  return rows;
}

export function renderNodeImageRows(rows: readonly NodeImageRow[]): string {
  if (rows.length === 0) return 'No image tags on any NodeImage.\n';
  return renderTable(
    ['NODE', 'IMAGE', 'TAG', 'PHASE', 'PROGRESS', 'MESSAGE'],
    rows.map((r) => [
      r.node,
      r.image,
      r.tag,
      r.phase,
      r.progress === undefined ? '' : `${r.progress}%`,
      (r.message ?? '').split('\n')[0] ?? '',
    ]),
  );
}

export async function runNodeImages(ctx: PluginContext, node: string | undefined): Promise<number> {
  const items = node
    ? [await ctx.api.get<NodeImage>(NODE_IMAGES, node)]
    : (await ctx.api.list<NodeImage>(NODE_IMAGES)).items;
  const rows = nodeImageRows(items);
  if (ctx.global.output === 'json') printJson(ctx, rows);
  else ctx.stdout.write(renderNodeImageRows(rows));
  return 0;
}
