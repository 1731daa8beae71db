// Settling a reservation, checked against exact models: after a settle the state decides what
// charging the actual cost at the reservation would have made it decide.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import {
  type Algorithm,
  fixedWindow,
  gcra,
  leakyBucket,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from './index.js'
import { ceilDiv, floorDiv } from './integer.js'
import { reservable } from './reservable.js'

/**
 * An exact model of one key: `allows` and `remaining` read it at a time, `charge` takes units
 * at a time whatever it holds, `settle` applies the stated settle semantics.
 */
type Model = {
  allows(cost: number, t: number): boolean
  /** Units left at `t`, as a decision reports them (whole, never negative). */
  remaining(t: number): number
  charge(cost: number, t: number): void
  settle(charged: number, actual: number, chargedAt: number, now: number): void
}

/** A token bucket in units, debts included: level at `last`, at most one burst below empty. */
function rateModel(algorithm: Algorithm, start: number): Model {
  const params = algorithm.params!
  if (params.kind !== 'rate') throw new Error('not a rate rule')
  const { unitsPerMs, unitsPerToken, capacity } = params
  let level = capacity
  let last = start
  const at = (t: number) => {
    const elapsed = Math.max(0, t - last)
    return elapsed >= ceilDiv(capacity - level, unitsPerMs)
      ? capacity
      : Math.min(capacity, level + elapsed * unitsPerMs)
  }
  return {
    allows: (cost, t) => cost === 0 || at(t) >= cost * unitsPerToken,
    remaining: (t) => Math.max(0, floorDiv(at(t), unitsPerToken)),
    charge(cost, t) {
      level = Math.max(-capacity, at(t) - cost * unitsPerToken)
      last = Math.max(last, t)
    },
    // No other charge since the reservation (these traces have none): the level charging
    // `actual` at the reservation would have left, and the refill since counted from there.
    settle(charged, actual, chargedAt) {
      expect(last).toBe(chargedAt)
      level = Math.min(capacity, Math.max(-capacity, level + (charged - actual) * unitsPerToken))
    },
  }
}

/** Counts per window: the fixed window's own, or the sliding window's estimate over them. */
function windowModel(algorithm: Algorithm, sliding: 'no' | 'two' | 'sub'): Model {
  const params = algorithm.params!
  if (params.kind !== 'window') throw new Error('not a window rule')
  const { limit, windowMs } = params
  const buckets = params.buckets ?? 1
  const width = sliding === 'sub' ? windowMs / buckets : windowMs
  const counts = new Map<number, number>()
  const count = (index: number) => counts.get(index) ?? 0
  const index = (t: number) => Math.floor(t / width)
  /** Units counted at `t`, times `windowMs` for the two-counter estimate. */
  const used = (t: number) => {
    const i = index(t)
    if (sliding === 'no') return count(i) * windowMs
    if (sliding === 'two') return count(i - 1) * (windowMs - (t - i * width)) + count(i) * windowMs
    let sum = 0
    for (let n = i - buckets + 1; n <= i; n++) sum += count(n)
    return sum * windowMs
  }
  /** Whether units charged at `chargedAt` still count at `now`. */
  const weighs = (chargedAt: number, now: number) =>
    index(chargedAt) > index(now) - (sliding === 'two' ? 2 : sliding === 'sub' ? buckets : 1)
  const add = (i: number, units: number) => counts.set(i, Math.max(0, count(i) + units))
  return {
    allows: (cost, t) => cost === 0 || used(t) + cost * windowMs <= limit * windowMs,
    remaining: (t) => Math.max(0, floorDiv(limit * windowMs - used(t), windowMs)),
    charge: (cost, t) => add(index(t), cost),
    settle(charged, actual, chargedAt, now) {
      if (weighs(chargedAt, now)) add(index(chargedAt), actual - charged)
      else if (actual > charged) add(index(now), actual - charged)
    },
  }
}

/** A log of admitted units' times. */
function logModel(algorithm: Algorithm): Model {
  const params = algorithm.params!
  if (params.kind !== 'window') throw new Error('not a window rule')
  const { limit, windowMs } = params
  let times: number[] = []
  const live = (t: number) => times.filter((time) => time > t - windowMs).length
  const log = (units: number, t: number) => {
    for (let k = 0; k < units; k++) times.push(t)
    times.sort((a, b) => a - b)
  }
  return {
    allows: (cost, t) => cost === 0 || live(t) + cost <= limit,
    remaining: (t) => Math.max(0, limit - live(t)),
    charge: log,
    settle(charged, actual, chargedAt, now) {
      const inside = chargedAt > now - windowMs
      if (actual > charged) log(actual - charged, inside ? chargedAt : now)
      else if (inside) {
        let back = charged - actual
        times = times.filter((time) => !(time === chargedAt && back-- > 0))
      }
    },
  }
}

type Family = {
  readonly name: string
  /** Parameters, built in the property: a counterexample then shows them, not the code. */
  readonly make: fc.Arbitrary<() => Algorithm>
  readonly model: (algorithm: Algorithm, start: number) => Model
  /** The longest retry a denial may ask for: how far a brute-force check looks. */
  readonly horizon: (algorithm: Algorithm) => number
}

/** A factory call that prints as its parameters in a counterexample. */
function named<P>(params: P, factory: (params: P) => Algorithm): () => Algorithm {
  const build = () => factory(params)
  build.toString = () => JSON.stringify(params)
  return build
}

const rate = fc.record({
  rate: fc.integer({ min: 1, max: 50 }),
  periodMs: fc.integer({ min: 1, max: 2000 }),
  burst: fc.integer({ min: 1, max: 30 }),
})
const window = fc.record({
  limit: fc.integer({ min: 1, max: 30 }),
  windowMs: fc.integer({ min: 1, max: 600 }),
})
const rateHorizon = (algorithm: Algorithm) => {
  const p = algorithm.params as { unitsPerMs: number; capacity: number }
  return ceilDiv(3 * p.capacity, p.unitsPerMs) + 2
}
const windowHorizon = (algorithm: Algorithm) => 3 * algorithm.policy.windowMs + 2

const FAMILIES: readonly Family[] = [
  {
    name: 'token bucket',
    make: rate.map((p) => named(p, tokenBucket)),
    model: rateModel,
    horizon: rateHorizon,
  },
  { name: 'GCRA', make: rate.map((p) => named(p, gcra)), model: rateModel, horizon: rateHorizon },
  {
    name: 'GCRA, split ticks',
    make: fc
      .record({
        rate: fc.integer({ min: 2053, max: 4000 }),
        burst: fc.integer({ min: 1, max: 40 }),
      })
      .map((p) => named(p, gcra)),
    model: rateModel,
    horizon: rateHorizon,
  },
  {
    name: 'leaky bucket',
    make: rate.map((p) => named(p, leakyBucket)),
    model: rateModel,
    horizon: rateHorizon,
  },
  {
    name: 'fixed window',
    make: window.map((p) => named(p, fixedWindow)),
    model: (a) => windowModel(a, 'no'),
    horizon: windowHorizon,
  },
  {
    name: 'sliding window counter',
    make: window.map((p) => named(p, slidingWindow)),
    model: (a) => windowModel(a, 'two'),
    horizon: windowHorizon,
  },
  {
    name: 'sliding window, sub-windows',
    make: fc
      .record({
        limit: fc.integer({ min: 1, max: 30 }),
        buckets: fc.integer({ min: 2, max: 6 }),
        width: fc.integer({ min: 1, max: 100 }),
      })
      .map(({ limit, buckets, width }) =>
        named({ limit, windowMs: buckets * width, buckets }, slidingWindow),
      ),
    model: (a) => windowModel(a, 'sub'),
    horizon: windowHorizon,
  },
  {
    name: 'sliding log',
    make: window.map((p) => named(p, slidingLog)),
    model: logModel,
    horizon: windowHorizon,
  },
]

type Step = { readonly gap: number; readonly cost: number }
const steps = (maxGap: number) =>
  fc.array(
    fc.record({
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: maxGap })),
      cost: fc.nat(3),
    }),
    { maxLength: 30 },
  )

/** Checks a decision against the model at `t`, before the model takes its charge. */
function agree(decision: Decision, model: Model, cost: number, t: number, horizon: number): void {
  expect(decision.allowed).toBe(model.allows(cost, t))
  if (decision.allowed) return
  expect(decision.remaining).toBe(model.remaining(t))
  // Exact: the request passes at the retry time and not a ms before (nothing else arriving).
  const retry = decision.retryAfterMs!
  expect(retry).toBeLessThanOrEqual(horizon)
  expect(model.allows(cost, t + retry)).toBe(true)
  if (retry > 0) expect(model.allows(cost, t + retry - 1)).toBe(false)
}

describe.each(FAMILIES)('settle: $name', ({ make, model: modelOf, horizon: horizonOf }) => {
  it('leaves the state deciding as charging the actual cost at the reservation would', () => {
    fc.assert(
      fc.property(
        make,
        fc.integer({ min: 0, max: 1_000_000 }),
        steps(400),
        fc.record({ gap: fc.nat(400), settleAfter: fc.nat(3000) }),
        fc.nat(100),
        fc.nat(100),
        steps(400),
        (made, start, before, { gap, settleAfter }, estimateSeed, actualSeed, after) => {
          const algorithm = reservable(made())
          const limit = algorithm.limit
          const horizon = horizonOf(algorithm)
          const state = new Array<number>(algorithm.stateSize).fill(0)
          algorithm.init(state, 0, start)
          const model = modelOf(algorithm, start)
          let t = start
          const run = (trace: readonly Step[]) => {
            for (const { gap, cost } of trace) {
              t += gap
              const c = Math.min(cost, limit)
              const decision = algorithm.decide(state, 0, c, t, true)
              agree(decision, model, c, t, horizon)
              if (decision.allowed) model.charge(c, t)
            }
          }
          run(before)
          t += gap
          const estimate = estimateSeed % (limit + 1)
          const reserved = algorithm.decide(state, 0, estimate, t, true)
          agree(reserved, model, estimate, t, horizon)
          if (!reserved.allowed) return
          model.charge(estimate, t)
          // Up to two limits beyond the estimate: debts past one burst are forgiven.
          const actual = actualSeed % (estimate + 2 * limit + 1)
          const chargedAt = t
          t += settleAfter
          algorithm.settle!(state, 0, estimate, actual, chargedAt, t)
          model.settle(estimate, actual, chargedAt, t)
          run(after)
        },
      ),
      { numRuns: 400 },
    )
  })

  it('changes nothing when the actual cost is the estimate', () => {
    fc.assert(
      fc.property(make, fc.nat(50), fc.nat(5000), (made, estimateSeed, later) => {
        const algorithm = reservable(made())
        const state = new Array<number>(algorithm.stateSize).fill(0)
        algorithm.init(state, 0, 1000)
        const estimate = estimateSeed % (algorithm.limit + 1)
        algorithm.decide(state, 0, estimate, 1000, true)
        const before = [...state]
        algorithm.settle!(state, 0, estimate, estimate, 1000, 1000 + later)
        expect(state).toEqual(before)
      }),
    )
  })
})

describe('settle: debts', () => {
  it('refuses a token bucket in debt until it is repaid, with the exact Retry-After', () => {
    // 1 per second, burst 10: reserve 2, use 12 → 10 below a full bucket's worth of 2 tokens,
    // i.e. 2 tokens of debt: a request of 1 waits 3 s.
    const bucket = reservable(tokenBucket({ rate: 1, burst: 10 }))
    const state = [0, 0]
    bucket.init(state, 0, 0)
    bucket.decide(state, 0, 8, 0, true)
    expect(bucket.decide(state, 0, 2, 0, true).allowed).toBe(true)
    bucket.settle!(state, 0, 2, 4, 0, 500)
    const refused = bucket.decide(state, 0, 1, 500, true)
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 2500 })
    expect(refused.resetAfterMs).toBe(11_500)
    expect(bucket.decide(state, 0, 1, 3000, true).allowed).toBe(true)
  })

  it('forgives what lies beyond one burst of debt', () => {
    const bucket = reservable(gcra({ rate: 1, burst: 5 }))
    const state = [0]
    bucket.init(state, 0, 0)
    bucket.decide(state, 0, 5, 0, true)
    bucket.settle!(state, 0, 5, 1_000_000, 0, 0)
    // Two buckets' worth: 10 s until the next token's worth is back.
    expect(bucket.decide(state, 0, 1, 0, true).retryAfterMs).toBe(6000)
  })

  it('counts a window above its limit until it ends', () => {
    const window = reservable(fixedWindow({ limit: 10, windowMs: 1000 }))
    const state = [0, 0]
    window.init(state, 0, 0)
    window.decide(state, 0, 5, 100, true)
    window.settle!(state, 0, 5, 25, 100, 200)
    expect(window.decide(state, 0, 0, 300, true).remaining).toBe(0)
    expect(window.decide(state, 0, 1, 300, true)).toMatchObject({
      allowed: false,
      retryAfterMs: 700,
    })
    expect(window.decide(state, 0, 10, 1000, true).allowed).toBe(true)
  })

  it('charges an extra to the current window once the reservation’s has rolled over', () => {
    const window = reservable(fixedWindow({ limit: 10, windowMs: 1000 }))
    const state = [0, 0]
    window.init(state, 0, 0)
    window.decide(state, 0, 5, 900, true)
    window.settle!(state, 0, 5, 8, 900, 1100)
    expect(window.decide(state, 0, 0, 1100, true).remaining).toBe(7)
    window.settle!(state, 0, 5, 0, 900, 1100)
    expect(window.decide(state, 0, 0, 1100, true).remaining).toBe(7)
  })
})

describe('reservable', () => {
  it('drops the 8-byte form, which cannot hold a debt, and keeps the arithmetic', () => {
    const bucket = tokenBucket({ rate: 10, burst: 20 })
    expect(bucket.packed).toBeDefined()
    const wide = reservable(bucket)
    expect(wide.packed).toBeUndefined()
    expect(wide.decide).toBe(bucket.decide)
  })

  it('refuses an algorithm that cannot settle, naming it', () => {
    const own = { ...tokenBucket({ rate: 1, burst: 1 }), settle: undefined }
    expect(() => reservable(own)).toThrow(/token_bucket charges cannot be settled/)
  })
})
