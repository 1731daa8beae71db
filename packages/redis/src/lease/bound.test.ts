// Four leased stores on one shared store (Redis's stand-in), on one manual clock: whatever the
// trace, they never admit more than the stated bound, and deny only what the shared store could
// not cover either.
import { fixedWindow, gcra, leakyBucket, type RateRule, tokenBucket } from '@tollgate/core'
import type { Algorithm, Charge } from '@tollgate/core/store'
import { manualTime, referenceStore } from '@tollgate/test-utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { leasedStore } from './leased-store.js'

const PROCESSES = 4
const START = 1_800_000_000_000

const step = fc.record({
  process: fc.integer({ min: 0, max: PROCESSES - 1 }),
  // Mostly bursts (hot keys), now and then a pause long enough to end leases and windows.
  advanceMs: fc.oneof(
    { arbitrary: fc.constant(0), weight: 4 },
    { arbitrary: fc.integer({ min: 0, max: 20 }), weight: 4 },
    { arbitrary: fc.integer({ min: 0, max: 900 }), weight: 1 },
    { arbitrary: fc.integer({ min: 0, max: 20_000 }), weight: 1 },
  ),
  cost: fc.integer({ min: 1, max: 3 }),
})

/** Runs a trace through four leased stores; returns each admission's time and cost. */
async function run(
  algorithm: Algorithm,
  trace: readonly { process: number; advanceMs: number; cost: number }[],
  lease: { ttlMs: number; maxShare: number },
  onDenied?: (shared: ReturnType<typeof referenceStore>, charge: Charge, now: number) => void,
) {
  const time = manualTime(START)
  const shared = referenceStore()
  const rule = { id: 'hot', algorithm: algorithm.name } as unknown as RateRule
  const stores = Array.from({ length: PROCESSES }, () =>
    leasedStore(shared, { rules: [rule], ...lease, clock: time.clock, timers: time.timers }),
  )
  const admitted: { at: number; cost: number }[] = []
  for (const { process, advanceMs, cost: asked } of trace) {
    await time.advance(advanceMs)
    const cost = Math.min(asked, algorithm.limit)
    const charge: Charge = { rule: 'hot', algorithm, key: 'tenant:7', cost, shadow: false }
    const outcome = await stores[process]!.consume([charge], time.now())
    if (outcome.decisions[0]!.allowed) admitted.push({ at: time.now(), cost })
    else onDenied?.(shared, charge, time.now())
  }
  await Promise.all(stores.map((store) => store.close()))
  return { admitted, stats: stores.map((store) => store.stats()) }
}

const leaseOptions = fc.record({
  ttlMs: fc.integer({ min: 1, max: 3000 }),
  maxShare: fc.double({ min: 0.2, max: 1, noNaN: true }),
})

describe('leases on one hot key, four processes', () => {
  it('a fixed window never admits more than its limit, and denies only what the shared store cannot cover', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Small limits, so that the bursts of a trace fill windows.
        fc.integer({ min: 3, max: 16 }),
        fc.integer({ min: 50, max: 2000 }),
        leaseOptions,
        fc.array(step, { maxLength: 300 }),
        async (limit, windowMs, lease, trace) => {
          const algorithm = fixedWindow({ limit, windowMs })
          const { admitted } = await run(algorithm, trace, lease, (shared, charge, now) => {
            // Denied: what the shared store has left (leases held elsewhere excluded) is short.
            const state = shared.states.get(`hot\u0000${charge.key}`)
            const start = now - (now % windowMs)
            const count = state !== undefined && state[0] === start ? state[1]! : 0
            expect(limit - count).toBeLessThan(charge.cost)
          })
          const perWindow = new Map<number, number>()
          for (const { at, cost } of admitted) {
            const window = Math.floor(at / windowMs)
            perWindow.set(window, (perWindow.get(window) ?? 0) + cost)
          }
          for (const total of perWindow.values()) expect(total).toBeLessThanOrEqual(limit)
        },
      ),
      { numRuns: 150 },
    )
  }, 120_000)

  it.each([
    ['token_bucket', tokenBucket],
    ['gcra', gcra],
    ['leaky_bucket', leakyBucket],
  ] as const)(
    '%s: in every span of d ms they admit at most what the rule allows in d + ttlMs, and since the start at most what it allows',
    async (_name, make) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 3, max: 16 }),
          fc.integer({ min: 1, max: 20 }),
          fc.integer({ min: 100, max: 5000 }),
          leaseOptions,
          fc.array(step, { maxLength: 200 }),
          async (burst, rate, periodMs, lease, trace) => {
            const algorithm = make({ burst, rate, periodMs })
            const params = algorithm.params!
            if (params.kind !== 'rate') throw new Error('a rate rule')
            const allows = (spanMs: number) =>
              Math.floor((params.capacity + params.unitsPerMs * spanMs) / params.unitsPerToken)
            const { admitted } = await run(algorithm, trace, lease)
            let total = 0
            for (let i = 0; i < admitted.length; i++) {
              total += admitted[i]!.cost
              expect(total).toBeLessThanOrEqual(allows(admitted[i]!.at - START))
              let span = 0
              for (let j = i; j < admitted.length; j++) {
                span += admitted[j]!.cost
                const d = admitted[j]!.at - admitted[i]!.at
                expect(span).toBeLessThanOrEqual(allows(d + lease.ttlMs))
              }
            }
          },
        ),
        { numRuns: 100 },
      )
    },
    120_000,
  )

  it('accounts for every unit granted: spent, returned, lapsed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60 }),
        leaseOptions,
        fc.array(step, { maxLength: 200 }),
        async (limit, lease, trace) => {
          const windowMs = 1000
          const algorithm = fixedWindow({ limit, windowMs })
          const { admitted, stats } = await run(algorithm, trace, lease)
          const granted = stats.reduce((sum, s) => sum + s.grantedUnits, 0)
          const back = stats.reduce((sum, s) => sum + s.returnedUnits + s.lapsedUnits, 0)
          // Every unit taken ahead is spent or, once its lease ended, returned or lapsed.
          expect(back).toBeLessThanOrEqual(granted)
          const local = stats.reduce((sum, s) => sum + s.localDecisions, 0)
          expect(local).toBeLessThanOrEqual(admitted.length)
          expect(granted - back).toBeLessThanOrEqual(admitted.reduce((sum, a) => sum + a.cost, 0))
        },
      ),
      { numRuns: 100 },
    )
  }, 120_000)
})
