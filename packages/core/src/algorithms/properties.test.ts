// Properties over random traces: random gaps, costs and parameters.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { calendarWindows } from './calendar.js'
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  MAX_TIME_MS,
  type RateParams,
  slidingLog,
  slidingWindow,
  tokenBucket,
  type WindowParams,
} from './index.js'

type Arrival = { readonly gap: number; readonly cost: number }

/** Runs arrivals on one key in place; returns each arrival's time and decision. */
function replay(algorithm: Algorithm, arrivals: readonly Arrival[], start = 0) {
  const state = new Array<number>(algorithm.stateSize).fill(0)
  algorithm.init(state, 0, start)
  let now = start
  return arrivals.map(({ gap, cost }) => {
    now += gap
    const before = [...state]
    const decision = algorithm.decide(state, 0, cost, now, true)
    return { now, cost, decision, before }
  })
}

const rateParams = fc.record({
  rate: fc.integer({ min: 1, max: 1000 }),
  periodMs: fc.integer({ min: 1, max: 120_000 }),
  burst: fc.integer({ min: 1, max: 200 }),
})
const windowParams = fc.record({
  limit: fc.integer({ min: 1, max: 60 }),
  windowMs: fc.integer({ min: 1, max: 120_000 }),
})
const arrivalsFor = (maxCost: number, maxGap: number) =>
  fc.array(
    fc.record({
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: Math.ceil(maxGap) })),
      cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: maxCost })),
    }),
    { minLength: 1, maxLength: 150 },
  )
const rateCase = rateParams.chain((params) =>
  fc.tuple(fc.constant(params), arrivalsFor(params.burst, (3 * params.periodMs) / params.rate + 5)),
)
const windowCase = windowParams.chain((params) =>
  fc.tuple(fc.constant(params), arrivalsFor(params.limit, params.windowMs / 4 + 2)),
)

describe('token bucket, GCRA and leaky bucket (meter)', () => {
  it('make identical decisions on the same trace', () => {
    fc.assert(
      fc.property(rateCase, ([params, arrivals]) => {
        const decisions = (make: (p: RateParams) => Algorithm) =>
          replay(make(params), arrivals).map((r) => r.decision)
        const bucket = decisions(tokenBucket)
        expect(decisions(gcra)).toEqual(bucket)
        expect(decisions(leakyBucket)).toEqual(bucket)
      }),
      { numRuns: 300 },
    )
  })

  it('make identical decisions, in safe integers, at rates and bursts near the extremes', () => {
    const extreme = fc.record({
      rate: fc.oneof(
        fc.integer({ min: 1, max: 999_999_999_999_999 }),
        fc.integer({ min: 2000, max: 20_000 }),
      ),
      periodMs: fc.oneof(
        fc.constantFrom(1, 3, 1000, 999_983),
        fc.integer({ min: 1, max: 2 ** 31 }),
      ),
      burst: fc.oneof(
        fc.integer({ min: 1, max: 999_999_999_999_999 }),
        fc.integer({ min: 1, max: 50 }),
      ),
    })
    const gaps = fc.array(
      fc.record({
        gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5000 }), fc.nat()),
        share: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
      { minLength: 1, maxLength: 60 },
    )
    fc.assert(
      fc.property(extreme, gaps, (params, trace) => {
        let bucket: Algorithm
        try {
          bucket = tokenBucket(params)
        } catch {
          return // refused by the token bucket too
        }
        const others = [gcra(params), leakyBucket(params)]
        const states = [bucket, ...others].map((a) => {
          const state = new Array<number>(a.stateSize).fill(0)
          a.init(state, 0, 1_700_000_000_000)
          return state
        })
        let now = 1_700_000_000_000
        for (const { gap, share } of trace) {
          now = Math.min(MAX_TIME_MS, now + gap)
          const cost = Math.floor(share * params.burst)
          const expected = bucket.decide(states[0]!, 0, cost, now, true)
          others.forEach((algorithm, i) => {
            expect(algorithm.decide(states[i + 1]!, 0, cost, now, true)).toEqual(expected)
          })
          for (const state of states) expect(state.every(Number.isSafeInteger)).toBe(true)
        }
      }),
      { numRuns: 500 },
    )
  })

  it('never admit more than burst + rate × t in any span t', () => {
    fc.assert(
      fc.property(rateCase, ([params, arrivals]) => {
        const admitted = replay(tokenBucket(params), arrivals).filter((r) => r.decision.allowed)
        const periodMs = params.periodMs
        for (let i = 0; i < admitted.length; i++) {
          let spent = 0
          for (let j = i; j < admitted.length; j++) {
            spent += admitted[j]!.cost
            const span = admitted[j]!.now - admitted[i]!.now
            // spent ≤ burst + rate × span / period, multiplied through by the period
            expect(spent * periodMs).toBeLessThanOrEqual(
              params.burst * periodMs + params.rate * span,
            )
          }
        }
      }),
      { numRuns: 200 },
    )
  })
})

describe('window algorithms keep their promise', () => {
  it('sliding log: at most limit units in any window', () => {
    fc.assert(
      fc.property(windowCase, ([params, arrivals]) => {
        const admitted = replay(slidingLog(params), arrivals).filter((r) => r.decision.allowed)
        for (const end of admitted) {
          const inWindow = admitted
            .filter((r) => r.now > end.now - params.windowMs && r.now <= end.now)
            .reduce((sum, r) => sum + r.cost, 0)
          expect(inWindow).toBeLessThanOrEqual(params.limit)
        }
      }),
      { numRuns: 300 },
    )
  })

  it.each([
    ['fixed window', fixedWindow],
    ['sliding window counter', slidingWindow],
  ] as const)('%s: at most limit units per calendar window', (_name, make) => {
    fc.assert(
      fc.property(windowCase, ([params, arrivals]) => {
        const perWindow = new Map<number, number>()
        for (const r of replay(make(params), arrivals)) {
          if (!r.decision.allowed) continue
          const window = Math.floor(r.now / params.windowMs)
          perWindow.set(window, (perWindow.get(window) ?? 0) + r.cost)
        }
        for (const used of perWindow.values()) expect(used).toBeLessThanOrEqual(params.limit)
      }),
      { numRuns: 300 },
    )
  })

  it('calendar fixed window: at most limit units in each day, week, month or year', () => {
    fc.assert(
      fc.property(calendarCase, ([params, arrivals]) => {
        const windows = calendarWindows(params.calendar, params.timeZone)
        const perWindow = new Map<number, number>()
        for (const r of replay(fixedWindow(params), arrivals, 1_700_000_000_000)) {
          if (!r.decision.allowed) continue
          const window = windows.windowAt(r.now)[0]
          perWindow.set(window, (perWindow.get(window) ?? 0) + r.cost)
        }
        for (const used of perWindow.values()) expect(used).toBeLessThanOrEqual(params.limit)
      }),
      { numRuns: 100 },
    )
  })

  it('sub-window counters: at most limit units in any run of `buckets` sub-windows', () => {
    fc.assert(
      fc.property(bucketCase, ([params, arrivals]) => {
        const width = params.windowMs / params.buckets
        const perBucket = new Map<number, number>()
        for (const r of replay(slidingWindow(params), arrivals)) {
          if (!r.decision.allowed) continue
          const bucket = Math.floor(r.now / width)
          perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + r.cost)
        }
        for (const last of perBucket.keys()) {
          let used = 0
          for (let n = last - params.buckets + 1; n <= last; n++) used += perBucket.get(n) ?? 0
          expect(used).toBeLessThanOrEqual(params.limit)
        }
      }),
      { numRuns: 300 },
    )
  })

  it('sliding window counter: the weighted estimate never exceeds the limit', () => {
    fc.assert(
      fc.property(windowCase, ([params, arrivals]) => {
        const counter = slidingWindow(params)
        for (const r of replay(counter, arrivals)) {
          if (!r.decision.allowed) continue
          expect(r.decision.remaining).toBeGreaterThanOrEqual(0)
        }
      }),
      { numRuns: 200 },
    )
  })
})

/** Sub-window counters: a window of `buckets` sub-windows of whole ms. */
const bucketCase = fc
  .record({
    limit: fc.integer({ min: 1, max: 60 }),
    buckets: fc.constantFrom(2, 3, 6, 10, 60),
    width: fc.integer({ min: 1, max: 2000 }),
  })
  .chain(({ limit, buckets, width }) => {
    const params = { limit, windowMs: buckets * width, buckets }
    return fc.tuple(fc.constant(params), arrivalsFor(limit, params.windowMs / 4 + 2))
  })

/** Calendar windows, in UTC and in zones with daylight saving (Lord Howe's is 30 minutes). */
const calendarCase = fc
  .record({
    limit: fc.integer({ min: 1, max: 20 }),
    calendar: fc.constantFrom('day', 'week', 'month', 'year' as const),
    timeZone: fc.constantFrom(undefined, 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata'),
  })
  .chain((params) =>
    fc.tuple(
      fc.constant(params),
      fc.array(
        fc.record({
          gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 * 86_400_000 })),
          cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: params.limit })),
        }),
        { minLength: 1, maxLength: 60 },
      ),
    ),
  )

const everyAlgorithm = fc.oneof(
  rateCase.map(([p, a]) => [[tokenBucket(p), gcra(p), leakyBucket(p)], a] as const),
  windowCase.map(
    ([p, a]) => [[fixedWindow(p as WindowParams), slidingLog(p), slidingWindow(p)], a] as const,
  ),
  bucketCase.map(([p, a]) => [[slidingWindow(p)], a] as const),
  calendarCase.map(([p, a]) => [[fixedWindow(p)], a] as const),
)

describe('retryAfterMs', () => {
  it('is exact: the same request passes at that time, and fails 1 ms earlier', () => {
    fc.assert(
      fc.property(everyAlgorithm, ([algorithms, arrivals]) => {
        for (const algorithm of algorithms) {
          for (const { now, cost, decision, before } of replay(algorithm, arrivals)) {
            if (decision.allowed) {
              expect(decision.retryAfterMs).toBeUndefined()
              continue
            }
            const retry = decision.retryAfterMs!
            expect(retry).toBeGreaterThanOrEqual(1)
            const at = (time: number): Decision =>
              algorithm.decide([...before], 0, cost, time, false)
            expect(at(now + retry).allowed).toBe(true)
            expect(at(now + retry - 1).allowed).toBe(false)
          }
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('every decision', () => {
  it('has whole, non-negative figures and leaves a denied state untouched', () => {
    fc.assert(
      fc.property(everyAlgorithm, ([algorithms, arrivals]) => {
        for (const algorithm of algorithms) {
          const state = new Array<number>(algorithm.stateSize).fill(0)
          algorithm.init(state, 0, 0)
          let now = 0
          for (const { gap, cost } of arrivals) {
            now += gap
            const before = [...state]
            const d = algorithm.decide(state, 0, cost, now, true)
            for (const figure of [d.remaining, d.resetAfterMs, d.retryAfterMs ?? 0]) {
              expect(Number.isSafeInteger(figure) && figure >= 0).toBe(true)
            }
            expect(d.remaining).toBeLessThanOrEqual(algorithm.limit)
            expect(d.limit).toBe(algorithm.limit)
            if (!d.allowed) expect(state).toEqual(before)
            // A full quota leaves a state that can be dropped: at once, or (a fixed window,
            // which must remember the window it moved to) when its window ends.
            if (d.allowed && d.resetAfterMs === 0) {
              // The end of now's window: what a charge of 1 would be told to wait for its reset.
              const keptFor =
                algorithm.name === 'fixed_window'
                  ? algorithm.decide([...state], 0, 1, now, false).resetAfterMs
                  : 0
              expect(algorithm.freshAt(state, 0)).toBeLessThanOrEqual(now + keptFor)
            }
          }
        }
      }),
      { numRuns: 200 },
    )
  })
})

describe('refund', () => {
  it('right after an admitted charge, leaves the key as if it had never been charged', () => {
    fc.assert(
      fc.property(everyAlgorithm, ([algorithms, arrivals]) => {
        for (const algorithm of algorithms) {
          for (const { now, cost, decision, before } of replay(algorithm, arrivals)) {
            if (!decision.allowed || cost === 0) continue
            const charged = [...before]
            algorithm.decide(charged, 0, cost, now, true)
            algorithm.refund(charged, 0, cost, now, now)
            const probe = (state: number[]) => algorithm.decide(state, 0, 0, now, false)
            expect(probe(charged)).toEqual(probe([...before]))
          }
        }
      }),
      { numRuns: 200 },
    )
  })
})
