// Property: under any interleaving of add / addAfter / get / done / forget / time passing, the queue holds a key
// at most once, never hands out a key that is in flight, and processes every key added after it was last handed out.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WorkQueue } from '../../../src/kube/workqueue/queue.js';
import { FakeClock } from '../../../src/util/clock.js';
import { until } from '../../support/wait.js';

type Op =
  | { op: 'add'; key: string }
  | { op: 'addAfter'; key: string; ms: number }
  | { op: 'addRateLimited'; key: string }
  | { op: 'get' }
  | { op: 'done'; pick: number }
  | { op: 'forget'; key: string }
  | { op: 'advance'; ms: number };

const key = fc.constantFrom('a', 'b', 'c', 'd');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('add' as const), key }),
  fc.record({ op: fc.constant('addAfter' as const), key, ms: fc.integer({ min: 0, max: 50 }) }),
  fc.record({ op: fc.constant('addRateLimited' as const), key }),
  fc.record({ op: fc.constant('get' as const) }),
  fc.record({ op: fc.constant('done' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('forget' as const), key }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }),
);

describe('WorkQueue properties', () => {
  it('dedupes, never runs a key twice at once, and loses no add', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 60 }), async (ops) => {
        const clock = new FakeClock(0);
        const q = new WorkQueue<string>({ name: 'prop', clock });
        const inFlight = new Set<string>();
        const received: string[] = [];
        // Keys added (directly or by a delay that fired) after they were last handed out: they must come out again.
        const owed = new Set<string>();
        const getters: Promise<void>[] = [];
        let closing = false;
        const hand = (k: string | undefined): void => {
          if (k === undefined) {
            assert.ok(closing, 'get() answered undefined before shutdown');
            return;
          }
          assert.ok(!inFlight.has(k), `key ${k} handed out while in flight`);
          inFlight.add(k);
          owed.delete(k);
          received.push(k);
        };
        let handFailed: Error | undefined;
        const startGet = (): void => {
          getters.push(
            q
              .get()
              .then(hand)
              .catch((err: unknown) => {
                handFailed ??= err instanceof Error ? err : new Error(String(err));
              }),
          );
        };
        // Every key the queue handed out has reached `hand` (the queue counts it in flight as it hands it out).
        const caughtUp = async (): Promise<void> => {
          await until(() => handFailed !== undefined || inFlight.size === q.inFlight(), 'every get() answered');
          if (handFailed !== undefined) throw handFailed;
        };
        const finishAll = (): void => {
          for (const k of [...inFlight]) {
            inFlight.delete(k);
            q.done(k);
          }
        };
        for (const o of ops) {
          switch (o.op) {
            case 'add':
              q.add(o.key);
              owed.add(o.key);
              break;
            case 'addAfter':
              // A delayed add lands after this call, so the key is owed from now on (at the latest when it fires).
              q.addAfter(o.key, o.ms);
              owed.add(o.key);
              break;
            case 'addRateLimited':
              q.addRateLimited(o.key);
              owed.add(o.key);
              break;
            case 'get':
              startGet();
              break;
            case 'done': {
              const list = [...inFlight];
              if (list.length === 0) break;
              const k = list[o.pick % list.length]!;
              inFlight.delete(k);
              q.done(k);
              break;
            }
            case 'forget':
              q.forget(o.key);
              break;
            case 'advance':
              await clock.advance(o.ms);
              break;
          }
          await caughtUp();
          // Each key waits at most once, and never while it is in flight.
          assert.ok(q.len() <= 4 - inFlight.size, `queue holds ${q.len()} with ${inFlight.size} in flight`);
        }
        // Let every delayed add fire, finish what workers hold, and keep taking until nothing is left.
        for (let round = 0; round < 30 && (q.len() > 0 || q.delayedLen() > 0 || inFlight.size > 0); round++) {
          await clock.advance(2_000_000);
          finishAll();
          if (q.len() > 0) startGet();
          await caughtUp();
        }
        finishAll();
        assert.equal(q.len() + q.delayedLen(), 0, 'everything was handed out');
        assert.deepEqual([...owed], [], 'keys added but never processed afterwards');
        closing = true;
        q.shutDown();
        await Promise.all(getters);
        if (handFailed !== undefined) throw handFailed;
      }),
      { numRuns: 300 },
    );
  });

  it('holds each key at most once whatever is added', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(key, { maxLength: 100 }), async (keys) => {
        const q = new WorkQueue<string>({ name: 'dedupe', clock: new FakeClock(0) });
        for (const k of keys) q.add(k);
        assert.equal(q.len(), new Set(keys).size);
        const out: string[] = [];
        while (q.len() > 0) out.push((await q.get())!);
        assert.deepEqual(out, [...new Set(keys)], 'first-add order');
      }),
      { numRuns: 200 },
    );
  });
});
