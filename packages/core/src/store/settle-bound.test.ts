// The overshoot bound of reservations, on the memory store: whenever a request is admitted
// against an estimate, the units admitted beyond the limit (every request counted at what it
// really cost) never exceed the shortfall of the reservations in flight, the sum of
// max(0, actual − estimate).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '../algorithms/index.js'
import { reservable } from '../algorithms/reservable.js'
import { memoryStore } from './memory-store.js'

type Reservation = { readonly at: number; readonly estimate: number; readonly actual: number }

/**
 * The most units requests admitted so far may really have cost beyond the limit at `now`, for
 * the rule's own reading of "the limit": per fixed window, per trailing window, or over every
 * interval ending now for a rate (burst + rate × its length).
 */
type Excess = (admitted: readonly Reservation[], now: number) => number

const windowExcess =
  (limit: number, windowMs: number, trailing: boolean): Excess =>
  (admitted, now) => {
    const from = trailing ? now - windowMs : now - (now % windowMs) - 1
    let used = 0
    for (const r of admitted) if (r.at > from) used += r.actual
    return used - limit
  }

/** In units of 1 / periodMs of a token: burst × periodMs + rate × interval. */
const rateExcess =
  (rate: number, periodMs: number, burst: number): Excess =>
  (admitted, now) => {
    let worst = Number.NEGATIVE_INFINITY
    for (const { at: from } of admitted) {
      let used = 0
      for (const r of admitted) if (r.at >= from) used += r.actual
      worst = Math.max(worst, used * periodMs - burst * periodMs - rate * (now - from))
    }
    return worst / periodMs
  }

type Case = {
  readonly name: string
  readonly make: () => Algorithm
  readonly excess: Excess
  /**
   * Whether reservations may cost less than their estimate here. Not for rate rules (a give-back
   * to a bucket that filled up while the reservation was in flight may credit more than the
   * exact model), nor the sliding log (a log holds at most `limit` entries: after an extra
   * beyond that, a give-back may drop an entry the longer log would have kept). See the docs.
   */
  readonly under?: true
}

const CASES: readonly Case[] = [
  {
    name: 'token bucket',
    make: () => tokenBucket({ rate: 3, burst: 10 }),
    excess: rateExcess(3, 1000, 10),
  },
  { name: 'GCRA', make: () => gcra({ rate: 3, burst: 10 }), excess: rateExcess(3, 1000, 10) },
  {
    name: 'leaky bucket',
    make: () => leakyBucket({ rate: 3, burst: 10 }),
    excess: rateExcess(3, 1000, 10),
  },
  {
    name: 'fixed window',
    make: () => fixedWindow({ limit: 10, windowMs: 1000 }),
    excess: windowExcess(10, 1000, false),
    under: true,
  },
  {
    name: 'sliding log',
    make: () => slidingLog({ limit: 10, windowMs: 1000 }),
    excess: windowExcess(10, 1000, true),
  },
  {
    name: 'sliding window, sub-windows',
    make: () => slidingWindow({ limit: 10, windowMs: 1000, buckets: 10 }),
    // Counted per sub-window: the trailing window starts at a sub-window's edge.
    excess: (admitted, now) => windowExcess(10, 1000, true)(admitted, now - (now % 100) + 99),
    under: true,
  },
]

const events = fc.array(
  fc.record({
    gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 700 })),
    estimate: fc.integer({ min: 0, max: 6 }),
    over: fc.integer({ min: 0, max: 4 }),
    under: fc.integer({ min: 0, max: 4 }),
    settle: fc.nat(5),
  }),
  { maxLength: 60 },
)

describe.each(CASES)('$name', ({ make, excess, under }) => {
  it('never admits beyond the limit more than the shortfall of reservations in flight', () => {
    fc.assert(
      fc.property(events, (steps) => {
        const algorithm = reservable(make())
        const store = memoryStore()
        const charge = (cost: number) => ({ rule: 'r', algorithm, key: 'k', cost, shadow: false })
        const admitted: Reservation[] = []
        let inFlight: Reservation[] = []
        let now = 10_000
        for (const step of steps) {
          now += step.gap
          // Settle some of the reservations in flight, oldest first.
          for (const r of inFlight.slice(0, step.settle)) {
            store.settle([{ ...charge(r.estimate), actual: r.actual }], r.at, now)
          }
          inFlight = inFlight.slice(step.settle)
          const estimate = step.estimate
          const actual = Math.max(0, estimate + step.over - (under ? step.under : 0))
          const { decisions } = store.consume([charge(estimate)], now)
          if (!decisions[0]!.allowed) continue
          const reservation = { at: now, estimate, actual }
          admitted.push(reservation)
          inFlight.push(reservation)
          // A reservation of 0 only inspects: it is never refused, so it bounds nothing (its
          // whole cost is shortfall while it is in flight).
          if (estimate === 0) continue
          let shortfall = 0
          for (const r of inFlight) shortfall += Math.max(0, r.actual - r.estimate)
          expect(excess(admitted, now)).toBeLessThanOrEqual(shortfall)
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('memory store settle', () => {
  it('refuses an algorithm in its 8-byte form before writing anything', () => {
    const store = memoryStore()
    const wide = reservable(tokenBucket({ rate: 1, burst: 5 }))
    const packed = tokenBucket({ rate: 1, burst: 5 })
    store.consume([{ rule: 'w', algorithm: wide, key: 'k', cost: 5, shadow: false }], 0)
    const settle = () =>
      store.settle(
        [
          { rule: 'w', algorithm: wide, key: 'k', cost: 5, shadow: false, actual: 0 },
          { rule: 'p', algorithm: packed, key: 'k', cost: 1, shadow: false, actual: 3 },
        ],
        0,
        0,
      )
    expect(settle).toThrow(/pass the algorithm through reservable\(\)/)
    expect(store.consumeOne('w', wide, 'k', 0, 0).remaining).toBe(0)
  })

  it('charges an extra to a key it no longer holds, from a fresh state', () => {
    const store = memoryStore()
    const window = reservable(fixedWindow({ limit: 10, windowMs: 1000 }))
    store.settle(
      [{ rule: 'f', algorithm: window, key: 'k', cost: 2, shadow: false, actual: 7 }],
      0,
      10,
    )
    expect(store.consumeOne('f', window, 'k', 0, 10).remaining).toBe(5)
  })

  it('gives a sliding log room for an extra', () => {
    const store = memoryStore()
    const log = reservable(slidingLog({ limit: 50, windowMs: 1000 }))
    const charge = { rule: 'l', algorithm: log, key: 'k', shadow: false }
    store.consume([{ ...charge, cost: 1 }], 0)
    store.settle([{ ...charge, cost: 1, actual: 40 }], 0, 5)
    expect(store.consumeOne('l', log, 'k', 0, 5).remaining).toBe(10)
    expect(store.consumeOne('l', log, 'k', 11, 5)).toMatchObject({
      allowed: false,
      retryAfterMs: 995,
    })
  })
})
