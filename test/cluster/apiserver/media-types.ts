// Accept header parsing: which representation a client asked for (aggregated discovery, Table, plain JSON).

export interface MediaRange {
  type: string;
  params: Record<string, string>;
}

export function parseAccept(accept: string | undefined): MediaRange[] {
  if (!accept) return [];
  return accept.split(',').map((part) => {
    const [type = '', ...rest] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim();
    }
    return { type: type.toLowerCase(), params };
  });
}

function accepts(accept: string | undefined, group: string, as: string, versions: string[]): string | undefined {
  for (const range of parseAccept(accept)) {
    if (range.params.g === group && range.params.as === as && range.params.v && versions.includes(range.params.v)) {
      return range.params.v;
    }
  }
  return undefined;
}

/** Did the client ask for a meta.k8s.io Table (kubectl's default output)? */
export function wantsTable(accept: string | undefined): boolean {
  return accepts(accept, 'meta.k8s.io', 'Table', ['v1', 'v1beta1']) !== undefined;
}

/** The aggregated discovery version the client accepts first (v2 or v2beta1), if any. */
export function wantsAggregatedDiscovery(accept: string | undefined): string | undefined {
  for (const range of parseAccept(accept)) {
    if (range.params.g === 'apidiscovery.k8s.io' && range.params.as === 'APIGroupDiscoveryList') {
      if (range.params.v === 'v2' || range.params.v === 'v2beta1') return range.params.v;
    }
  }
  return undefined;
}
