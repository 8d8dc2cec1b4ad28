// Named health checks. Components add theirs (runtime reachable, informer synced, ...) and the HTTP server
// asks the registry for a report. A check passes by returning and fails by throwing (its message is the
// reason shown on /livez, /readyz and /healthz). A check reads the state its component keeps (a background loop's
// last answer, an informer's synced flag): it never calls a dependency, so a probe is answered in milliseconds
// whatever the runtime or the API server does. A check that does not answer within the timeout (a bug) fails with
// a timeout reason.
import { systemClock, type Clock } from '../util/clock.js';
import { errorMessage } from '../util/error-message.js';

export type HealthCheck = () => void | Promise<void>;

export interface CheckResult {
  name: string;
  ok: boolean;
  /** Why it failed; absent when ok. */
  reason?: string;
}

export interface HealthReport {
  ok: boolean;
  checks: CheckResult[];
}

export interface HealthRegistryOptions {
  /** A check that takes longer fails (default 1 s; checks read state, so this only catches a bug). */
  timeoutMs?: number | undefined;
  clock?: Clock;
}

const NAME = /^[a-z][A-Za-z0-9_-]*$/;

export class HealthRegistry {
  private readonly checks = new Map<string, HealthCheck>();
  private readonly timeoutMs: number;
  private readonly clock: Clock;

  constructor(options: HealthRegistryOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.clock = options.clock ?? systemClock;
  }

  /** Add a named check; returns a function that removes it. Names are unique. */
  add(name: string, check: HealthCheck): () => void {
    if (!NAME.test(name)) throw new Error(`health check name ${JSON.stringify(name)} must match ${NAME}`);
    if (this.checks.has(name)) throw new Error(`health check ${name} is already registered`);
    this.checks.set(name, check);
    return () => {
      if (this.checks.get(name) === check) this.checks.delete(name);
    };
  }

  names(): string[] {
    return [...this.checks.keys()];
  }

  /** Run every check at once and report each, in registration order. No checks = healthy. */
  async run(): Promise<HealthReport> {
    const checks = await Promise.all([...this.checks].map(([name, check]) => this.runOne(name, check)));
    return { ok: checks.every((c) => c.ok), checks };
  }

  private async runOne(name: string, check: HealthCheck): Promise<CheckResult> {
    let timer: { cancel(): void } | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.clock.setTimer(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(check), timeout]);
      return { name, ok: true };
    } catch (err) {
      return { name, ok: false, reason: reasonOf(err) };
    } finally {
      timer?.cancel();
    }
  }
}

/** Merge reports (readiness = liveness checks + readiness-only checks). */
export function combineReports(...reports: HealthReport[]): HealthReport {
  const checks = reports.flatMap((r) => r.checks);
  return { ok: checks.every((c) => c.ok), checks };
}

/**
 * The probe body: `ok` when healthy (Kubernetes only looks at the status code); otherwise, and always with
 * `verbose`, one line per check in the style of the Kubernetes API server: `[+]name ok` / `[-]name failed: reason`.
 */
export function renderReport(report: HealthReport, verbose: boolean): string {
  if (report.ok && !verbose) return 'ok\n';
  const lines = report.checks.map((c) => (c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed: ${c.reason ?? 'unknown'}`));
  lines.push(report.ok ? 'healthy' : 'unhealthy');
  return lines.join('\n') + '\n';
}

function reasonOf(err: unknown): string {
  const text = errorMessage(err);
  // One line per check keeps the body readable; the full error is in the component's own log.
  return text.replace(/\s*\n\s*/g, '; ');
}
