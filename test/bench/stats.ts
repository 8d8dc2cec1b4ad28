// Summary statistics for latency samples.
import type { Figure } from './framework.js';

/** The p-th percentile (0 < p <= 100) by the nearest-rank method: a value that was actually observed. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile of no samples');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile ${p} is not in (0, 100]`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** `<name>.p50` (with the note) and `<name>.p99` of the samples in ms, to a tenth. */
export function p50p99(name: string, samples: readonly number[], note?: string): Figure[] {
  const tenth = (ms: number): number => Math.round(ms * 10) / 10;
  return [
    { name: `${name}.p50`, value: tenth(percentile(samples, 50)), unit: 'ms', ...(note === undefined ? {} : { note }) },
    { name: `${name}.p99`, value: tenth(percentile(samples, 99)), unit: 'ms' },
  ];
}

/** Time `operation` `iterations` times, one call after another; returns each duration in ms. */
export async function timeEach(iterations: number, operation: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const start = performance.now();
    await operation();
    samples.push(performance.now() - start);
  }
  return samples;
}
