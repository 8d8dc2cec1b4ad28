// Counts requests by method, path and User-Agent (for "API requests per component" figures in tests/benchmarks).

export interface RequestFilter {
  method?: string;
  /** Path starts with this (query excluded). */
  pathPrefix?: string;
  /** User-Agent starts with this. */
  userAgent?: string;
}

interface Entry {
  method: string;
  path: string;
  userAgent: string;
  count: number;
}

export class RequestLog {
  /** Aggregated by method + path + user agent, so memory grows with distinct requests, not with traffic. */
  private readonly entries = new Map<string, Entry>();

  record(method: string, path: string, userAgent: string): void {
    const key = `${method} ${path} ${userAgent}`;
    const entry = this.entries.get(key);
    if (entry) entry.count++;
    else this.entries.set(key, { method, path, userAgent, count: 1 });
  }

  count(filter: RequestFilter = {}): number {
    let n = 0;
    for (const e of this.entries.values()) {
      if (filter.method && e.method !== filter.method.toUpperCase()) continue;
      if (filter.pathPrefix && !e.path.startsWith(filter.pathPrefix)) continue;
      if (filter.userAgent && !e.userAgent.startsWith(filter.userAgent)) continue;
      n += e.count;
    }
    return n;
  }
}
