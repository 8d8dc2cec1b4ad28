// The kept window of recent store events, for watches that resume from a resourceVersion. Events carry
// consecutive resourceVersions, so "everything after RV r" is a slice; an RV older than the window is expired.
import type { StoreEvent } from './store.js';

export class WatchWindow {
  private buffer: (StoreEvent | undefined)[];
  private start = 0;
  private size = 0;
  /** resourceVersion of the oldest kept event; everything after (oldestRv - 1) can be replayed. */
  private oldestRv: number;

  constructor(
    private readonly capacity: number,
    currentRv: number,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`watchWindow must be a positive integer, got ${capacity}`);
    this.buffer = new Array<StoreEvent | undefined>(capacity);
    this.oldestRv = currentRv + 1;
  }

  push(event: StoreEvent): void {
    if (this.size === 0) this.oldestRv = event.rv;
    if (this.size < this.capacity) {
      this.buffer[(this.start + this.size) % this.capacity] = event;
      this.size++;
    } else {
      this.buffer[this.start] = event;
      this.start = (this.start + 1) % this.capacity;
      this.oldestRv++;
    }
  }

  /** The oldest resourceVersion a watch may resume from. */
  oldestResumableRv(): number {
    return this.oldestRv - 1;
  }

  /** Events with rv > `rv`, oldest first, or undefined when some of them are no longer kept. */
  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.oldestRv - 1) return undefined;
    const skip = rv - (this.oldestRv - 1);
    const out: StoreEvent[] = [];
    for (let i = skip; i < this.size; i++) out.push(this.buffer[(this.start + i) % this.capacity]!);
    return out;
  }

  /** Forget every kept event: any resume from before `currentRv` expires. */
  compact(currentRv: number): void {
    this.buffer = new Array<StoreEvent | undefined>(this.capacity);
    this.start = 0;
    this.size = 0;
    this.oldestRv = currentRv + 1;
  }
}
