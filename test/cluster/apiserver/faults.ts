// Fault injection for tests: failing the next N (matching) requests with a status, stalling every response.
import { statusForCode, type ApiError } from './errors.js';

/** What a rule sees of a request: method, path (no query) and query (e.g. a fieldSelector naming an object). */
export interface FaultRequest {
  method: string;
  path: string;
  query: URLSearchParams;
}

export interface FailRule {
  remaining: number;
  code: number;
  reason?: string | undefined;
  match?: ((req: FaultRequest) => boolean) | undefined;
}

export class FaultState {
  private rules: FailRule[] = [];
  stallMs = 0;

  failNext(n: number, code: number, opts: { reason?: string; match?: FailRule['match'] } = {}): void {
    if (!Number.isInteger(n) || n < 0) throw new Error(`failNext: n must be a non-negative integer, got ${n}`);
    if (!Number.isInteger(code) || code < 100 || code > 599) throw new Error(`failNext: ${code} is not an HTTP status`);
    if (n > 0) this.rules.push({ remaining: n, code, reason: opts.reason, match: opts.match });
  }

  stall(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`stall: ms must be >= 0, got ${ms}`);
    this.stallMs = ms;
  }

  /** The failure this request gets, if a rule applies (the rule's count goes down). */
  take(method: string, path: string, query = new URLSearchParams()): ApiError | undefined {
    const rule = this.rules.find((r) => r.remaining > 0 && (!r.match || r.match({ method, path, query })));
    if (!rule) return undefined;
    rule.remaining--;
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return statusForCode(rule.code, rule.reason);
  }
}
