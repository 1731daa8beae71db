// The map store and `applyCharges` against themselves as they were before their code was
// shortened (old-store/*.test-copy.ts): over generated calls (single charges, requests of several
// charges, refunds; costs and times valid or not; key counts past `maxKeys`), the same decisions,
// the same errors, the same size and evictions after every call.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { concurrency } from '../algorithms/concurrency.js'
import { fixedWindow } from '../algorithms/fixed-window.js'
import { slidingLog } from '../algorithms/sliding-log.js'
import { tokenBucket } from '../algorithms/token-bucket.js'
import { mapStore } from './map-store.js'
import { mapStore as oldMapStore } from './old-store/map-store.test-copy.js'

const ALGORITHMS = [
  tokenBucket({ rate: 1, periodMs: 1000, burst: 3 }),
  // The same parameters: the same states.
  tokenBucket({ rate: 1, periodMs: 1000, burst: 3 }),
  tokenBucket({ rate: 7, periodMs: 60_000, burst: 2 }),
  fixedWindow({ limit: 2, windowMs: 5000 }),
  slidingLog({ limit: 3, windowMs: 4000 }),
  concurrency({ limit: 2 }),
]

/** What a call gives: its result, or the error it throws (code, field and message). */
function outcome(call: () => unknown): unknown {
  try {
    return { returned: call() }
  } catch (error) {
    const { name, code, field, message } = error as Record<string, unknown>
    return { threw: { name, code, field, message } }
  }
}

const chargeArb = fc.record({
  rule: fc.constantFrom('r', 's'),
  algorithm: fc.constantFrom(...ALGORITHMS),
  key: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  cost: fc.oneof(
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom(-1, 1.5, Number.NaN) },
  ),
  shadow: fc.boolean(),
})

const timeArb = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: -3000, max: 6000 }) },
  { weight: 1, arbitrary: fc.constantFrom(0.5, -1e9, Number.NaN, 2 ** 43) },
)

const callArb = fc.oneof(
  fc.record({ kind: fc.constant('one' as const), charge: chargeArb, dt: timeArb }),
  fc.record({
    kind: fc.constant('many' as const),
    charges: fc.array(chargeArb, { minLength: 0, maxLength: 4 }),
    dt: timeArb,
  }),
  fc.record({
    kind: fc.constant('refund' as const),
    charges: fc.array(chargeArb, { minLength: 0, maxLength: 3 }),
    back: fc.integer({ min: 0, max: 5000 }),
    dt: timeArb,
  }),
)

describe('mapStore, against its code before it was shortened', () => {
  it('the same decisions, errors, sizes and evictions', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 3, 10_000),
        fc.array(callArb, { maxLength: 60 }),
        (maxKeys, calls) => {
          const now = mapStore({ maxKeys })
          const before = oldMapStore({ maxKeys })
          let t = 1_000_000
          for (const call of calls) {
            // A step that is not a time is given as it is, once.
            const at = t + call.dt
            if (Number.isInteger(call.dt) && call.dt > -1e6) t = at
            const run = (store: typeof now) => {
              if (call.kind === 'one') {
                const { rule, algorithm, key, cost } = call.charge
                return store.consumeOne(rule, algorithm, key, cost, at)
              }
              if (call.kind === 'many') return store.consume(call.charges, at)
              return store.refund(call.charges, at - call.back, at)
            }
            expect(outcome(() => run(now))).toEqual(outcome(() => run(before)))
            expect([now.size, now.evictions]).toEqual([before.size, before.evictions])
          }
        },
      ),
      { numRuns: 2000 },
    )
  })

  it('refuses the same options', () => {
    for (const options of [
      {},
      { maxKeys: 0 },
      { maxKeys: 1.5 },
      { maxKeys: null },
      { maxkeys: 3 },
    ]) {
      expect(outcome(() => mapStore(options as never).size)).toEqual(
        outcome(() => oldMapStore(options as never).size),
      )
    }
  })
})
