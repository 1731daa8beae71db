// Carrying a key's state over a change of its rule's figures (limiter.update), per algorithm and
// strategy, against exact models written from the definitions in docs/concepts.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CarryStrategy, DEFAULT_CARRY } from './carried-use.js'
import { carryState } from './carry.js'
import type { Algorithm, RateParams } from './index.js'
import { fixedWindow, gcra, leakyBucket, slidingLog, slidingWindow, tokenBucket } from './index.js'

const STRATEGIES: readonly CarryStrategy[] = ['keep', 'proportional', 'reset', 'additive']
const START = 1_000_000
type Arrival = { readonly gap: number; readonly cost: number }
const arrivals = (max: number) =>
  fc.array(
    fc.record({ gap: fc.integer({ min: 0, max: 3000 }), cost: fc.integer({ min: 1, max: max }) }),
    {
      maxLength: 40,
    },
  )

/** The amount used after the change, in the new units: the definitions of the strategies. */
function modelUse(
  strategy: CarryStrategy,
  used: number,
  from: [full: number, per: number],
  to: [full: number, per: number],
) {
  if (strategy === 'reset' || used <= 0) return 0
  if (strategy === 'proportional') return Math.min(to[0], Math.ceil((used * to[0]) / from[0]))
  const same = Math.ceil((used * to[1]) / from[1])
  return Math.min(same, strategy === 'keep' ? 2 * to[0] : to[0])
}

/** Runs arrivals through an algorithm's state, from `now`; the decisions and the time reached. */
function run(algorithm: Algorithm, state: number[], list: readonly Arrival[], now: number) {
  const decisions = list.map(({ gap, cost }) => {
    now += gap
    const c = Math.min(cost, algorithm.limit)
    const d = algorithm.decide(state, 0, c, now, true)
    return [d.allowed, d.remaining]
  })
  return { decisions, now }
}

function fresh(algorithm: Algorithm, now: number): number[] {
  const state = new Array<number>(algorithm.stateSize).fill(0)
  algorithm.init(state, 0, now)
  return state
}

/**
 * A token bucket in scaled units, written from its definition. Debt (`keep` past the new
 * allowance) holds it empty: for whole ms in a bucket, whose state counts time in ms (so it
 * refills up to a ms later), to the unit in GCRA, whose arrival time counts ticks (`exact`).
 */
function rateModel(p: {
  capacity: number
  unitsPerMs: number
  unitsPerToken: number
  burst: number
}) {
  let level = p.capacity
  let last = 0
  const levelAt = (t: number) =>
    t < last ? level : Math.min(p.capacity, level + (t - last) * p.unitsPerMs)
  return {
    start(at: number, used: number, exact: boolean) {
      const debt = Math.max(0, used - p.capacity)
      level = exact ? p.capacity - used : Math.max(0, p.capacity - used)
      last = exact ? at : at + Math.ceil(debt / p.unitsPerMs)
    },
    used: (t: number) => p.capacity - levelAt(t),
    decide(t: number, cost: number) {
      const c = Math.min(cost, p.burst)
      const now = levelAt(t)
      if (now < c * p.unitsPerToken) return [false, Math.max(0, Math.floor(now / p.unitsPerToken))]
      level = now - c * p.unitsPerToken
      last = Math.max(t, last)
      return [true, Math.floor(level / p.unitsPerToken)]
    },
  }
}

const RATE = { token_bucket: tokenBucket, gcra, leaky_bucket: leakyBucket }
const rateParams = fc.record({
  rate: fc.integer({ min: 1, max: 50 }),
  periodMs: fc.integer({ min: 1, max: 5000 }),
  burst: fc.integer({ min: 1, max: 30 }),
})
const names = fc.constantFrom(...(Object.keys(RATE) as (keyof typeof RATE)[]))

describe('carrying a rate rule (token bucket, GCRA, leaky bucket: into each other too)', () => {
  it('decides after the change as a bucket holding the carried amount used', () => {
    fc.assert(
      fc.property(
        names,
        names,
        rateParams,
        rateParams,
        fc.constantFrom(...STRATEGIES),
        arrivals(30),
        arrivals(30),
        (fromName, toName, a, b, strategy, before, after) => {
          const from = RATE[fromName](a as RateParams)
          const to = RATE[toName](b as RateParams)
          const pa = from.params as Parameters<typeof rateModel>[0]
          const pb = to.params as Parameters<typeof rateModel>[0]
          const old = rateModel(pa)
          const state = fresh(from, START)
          let now = START
          for (const { gap, cost } of before) {
            now += gap
            const c = Math.min(cost, from.limit)
            expect(from.decide(state, 0, c, now, true).allowed).toBe(old.decide(now, c)[0])
          }
          const used = modelUse(
            strategy,
            old.used(now),
            [pa.capacity, pa.unitsPerToken],
            [pb.capacity, pb.unitsPerToken],
          )
          const carried = carryState(from, state, 0, to, now, strategy) ?? fresh(to, now)
          const next = rateModel(pb)
          next.start(now, used, toName === 'gcra')
          let t = now
          const expected = after.map(({ gap, cost }) => {
            t += gap
            return next.decide(t, cost)
          })
          expect(run(to, carried, after, now).decisions).toEqual(expected)
        },
      ),
      { numRuns: 400 },
    )
  })
})

const windowParams = fc.record({
  limit: fc.integer({ min: 1, max: 40 }),
  windowMs: fc.integer({ min: 1, max: 20_000 }),
})

describe('carrying a fixed window', () => {
  it('counts the carried amount in the window of the change', () => {
    fc.assert(
      fc.property(
        windowParams,
        windowParams,
        fc.constantFrom(...STRATEGIES),
        arrivals(40),
        arrivals(40),
        (a, b, strategy, before, after) => {
          const from = fixedWindow(a)
          const to = fixedWindow(b)
          const state = fresh(from, START)
          const { now } = run(from, state, before, START)
          // The model: a count per epoch-aligned window.
          const startOf = (t: number, w: number) => t - (t % w)
          const used =
            now < state[0]! + a.windowMs && state[0] === startOf(now, a.windowMs) ? state[1]! : 0
          let window = startOf(now, b.windowMs)
          let count = modelUse(strategy, used, [a.limit, 1], [b.limit, 1])
          const carried = carryState(from, state, 0, to, now, strategy) ?? fresh(to, now)
          let t = now
          const expected = after.map(({ gap, cost }) => {
            t += gap
            const c = Math.min(cost, b.limit)
            if (startOf(t, b.windowMs) !== window) {
              window = startOf(t, b.windowMs)
              count = 0
            }
            if (count + c > b.limit) return [false, Math.max(0, b.limit - count)]
            count += c
            return [true, b.limit - count]
          })
          expect(run(to, carried, after, now).decisions).toEqual(expected)
        },
      ),
      { numRuns: 400 },
    )
  })
})

describe('carrying a sliding log', () => {
  it('keeps live entries at their own times, as the definitions say', () => {
    fc.assert(
      fc.property(
        windowParams,
        windowParams,
        fc.constantFrom(...STRATEGIES),
        arrivals(40),
        arrivals(40),
        (a, b, strategy, before, after) => {
          const from = slidingLog(a)
          const to = slidingLog(b)
          const state = fresh(from, START)
          // The model: every admitted unit's time.
          let times: number[] = []
          let t = START
          for (const { gap, cost } of before) {
            t += gap
            const c = Math.min(cost, a.limit)
            const live = times.filter((x) => x > t - a.windowMs)
            const allowed = live.length + c <= a.limit
            expect(from.decide(state, 0, c, t, true).allowed).toBe(allowed)
            times = allowed ? [...live, ...Array(c).fill(t)] : live
          }
          const now = t
          const live = times.filter((x) => x > now - a.windowMs)
          const count = Math.min(
            b.limit,
            modelUse(strategy, live.length, [a.limit, 1], [b.limit, 1]),
          )
          times =
            strategy === 'proportional'
              ? Array.from(
                  { length: count },
                  (_, n) => live[Math.floor((n * live.length) / count)]!,
                )
              : live.slice(live.length - count)
          const carried = carryState(from, state, 0, to, now, strategy) ?? fresh(to, now)
          const expected = after.map(({ gap, cost }) => {
            t += gap
            const c = Math.min(cost, b.limit)
            const kept = times.filter((x) => x > t - b.windowMs)
            if (kept.length + c > b.limit) return [false, Math.max(0, b.limit - kept.length)]
            times = [...kept, ...Array(c).fill(t)]
            return [true, b.limit - times.length]
          })
          expect(run(to, carried, after, now).decisions).toEqual(expected)
        },
      ),
      { numRuns: 400 },
    )
  })
})

describe('carrying a sliding window (two counters or sub-windows)', () => {
  it('leaves what the carried estimate leaves', () => {
    const shapes = fc.record({
      limit: fc.integer({ min: 1, max: 40 }),
      windowMs: fc.constantFrom(6000, 60_000, 120_000),
      buckets: fc.constantFrom(undefined, 2, 6, 60),
    })
    fc.assert(
      fc.property(
        shapes,
        shapes,
        fc.constantFrom(...STRATEGIES),
        arrivals(40),
        (a, b, strategy, before) => {
          const shape = ({ buckets, ...rest }: typeof a) =>
            buckets === undefined ? rest : { ...rest, buckets }
          const from = slidingWindow(shape(a))
          const to = slidingWindow(shape(b))
          const state = fresh(from, START)
          const { now } = run(from, state, before, START)
          const used = a.limit - from.decide(state, 0, 0, now, false).remaining
          const carried = carryState(from, state, 0, to, now, strategy) ?? fresh(to, now)
          const expected = modelUse(strategy, used, [a.limit, 1], [b.limit, 1])
          expect(to.decide(carried, 0, 0, now, false).remaining).toBe(
            Math.max(0, b.limit - expected),
          )
        },
      ),
      { numRuns: 400 },
    )
  })
})

describe('carrying into two sub-window counters', () => {
  // Two sub-windows take three numbers, as the two counters do: the carried count is charged at
  // now, in now's sub-window, so it counts until that one ages out, a whole window later.
  it('counts the carried amount in the sub-window of now', () => {
    const from = slidingWindow({ limit: 10, windowMs: 2000, buckets: 2 })
    const to = slidingWindow({ limit: 20, windowMs: 2000, buckets: 2 })
    for (const now of [START, START + 1000]) {
      const state = fresh(from, now)
      from.decide(state, 0, 5, now, true)
      const carried = carryState(from, state, 0, to, now, 'keep')!
      const lastOfIt = (Math.floor(now / 1000) + 2) * 1000 - 1
      expect(to.decide(carried, 0, 0, lastOfIt, false).remaining, String(now)).toBe(15)
      expect(to.decide(carried, 0, 0, lastOfIt + 1, false).remaining, String(now)).toBe(20)
    }
  })
})

describe('what starts fresh', () => {
  it('an algorithm changed into another family, and a reset', () => {
    const window = fixedWindow({ limit: 10, windowMs: 1000 })
    const bucket = tokenBucket({ rate: 1, burst: 10 })
    const state = fresh(window, START)
    window.decide(state, 0, 5, START, true)
    expect(carryState(window, state, 0, bucket, START, 'keep')).toBeUndefined()
    expect(
      carryState(window, state, 0, fixedWindow({ limit: 20, windowMs: 1000 }), START, 'reset'),
    ).toBeUndefined()
  })

  it('defaults to keep, but a leaky queue’s schedule, which starts afresh', () => {
    expect(Object.entries(DEFAULT_CARRY).filter(([, s]) => s !== 'keep')).toEqual([
      ['leaky_queue', 'reset'],
    ])
  })
})
