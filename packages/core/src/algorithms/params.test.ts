import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import {
  fixedWindow,
  gcra,
  leakyBucket,
  MAX_TIME_MS,
  slidingLog,
  slidingWindow,
  step,
  tokenBucket,
} from './index.js'
import { ceilDiv, floorDiv } from './integer.js'

function errorOf(action: () => unknown) {
  try {
    action()
  } catch (error) {
    if (isRateLimitError(error)) return error
    throw error
  }
  throw new Error('expected a RateLimitError')
}

describe('parameters are refused with the field named', () => {
  it.each([
    ['burst < 1', () => tokenBucket({ rate: 10, burst: 0 }), 'burst'],
    ['fractional rate', () => gcra({ rate: 1.5, burst: 3 }), 'rate'],
    ['zero period', () => tokenBucket({ rate: 1, periodMs: 0, burst: 1 }), 'periodMs'],
    ['negative window', () => fixedWindow({ limit: 5, windowMs: -1 }), 'windowMs'],
    ['limit < 1', () => slidingWindow({ limit: 0, windowMs: 1000 }), 'limit'],
    ['NaN limit', () => slidingLog({ limit: Number.NaN, windowMs: 1000 }), 'limit'],
    ['a huge sliding log', () => slidingLog({ limit: 1_000_000, windowMs: 1000 }), 'limit'],
    // Each is sent in a RateLimit field, whose Integers stop at 15 digits.
    ['a limit no field can carry', () => fixedWindow({ limit: 1e15, windowMs: 1000 }), 'limit'],
    ['a burst no field can carry', () => gcra({ rate: 1, burst: 1e15 }), 'burst'],
    ['a rate no field can carry', () => tokenBucket({ rate: 1e15, burst: 1 }), 'rate'],
  ])('%s', (_name, make, field) => {
    const error = errorOf(make)
    expect(error.code).toBe('ERR_RL_INVALID_RULE')
    expect(error.field).toBe(field)
    expect(error.message).toContain(field)
  })

  it('takes the largest count a field can carry', () => {
    expect(() => fixedWindow({ limit: 999_999_999_999_999, windowMs: 1000 })).not.toThrow()
  })

  it('refuses parameters whose arithmetic would pass 2^53', () => {
    expect(errorOf(() => tokenBucket({ rate: 1, periodMs: 2 ** 40, burst: 2 ** 20 })).field).toBe(
      'burst',
    )
    expect(errorOf(() => slidingWindow({ limit: 2 ** 20, windowMs: 2 ** 33 })).field).toBe('limit')
  })

  // GCRA once refused rates that reduce to more than 2,047 units per ms: its TAT in ticks since
  // the epoch passed 2^53. AWS API Gateway's default is 10,000 per second, burst 5,000.
  it.each([
    { rate: 4099, periodMs: 4096, burst: 10 },
    { rate: 2048, periodMs: 1, burst: 2048 },
    { rate: 2053, periodMs: 1000, burst: 10 },
    { rate: 4999, periodMs: 1000, burst: 4999 },
    { rate: 10_000, periodMs: 1000, burst: 5000 },
  ])('takes every rate the token bucket takes: $rate per $periodMs ms', (params) => {
    const bucket = tokenBucket(params)
    const cell = gcra(params)
    const meter = leakyBucket(params)
    let [b, c, m] = [bucket, cell, meter].map((a) => step(a, undefined, 0, 1_800_000_000_000).state)
    for (let i = 0; i < 3 * params.burst; i++) {
      const now = 1_800_000_000_000 + Math.floor(i / 3)
      const expected = step(bucket, b, 1, now)
      const fromCell = step(cell, c, 1, now)
      const fromMeter = step(meter, m, 1, now)
      expect(fromCell.decision).toEqual(expected.decision)
      expect(fromMeter.decision).toEqual(expected.decision)
      ;[b, c, m] = [expected.state, fromCell.state, fromMeter.state]
    }
  })
})

describe('costs', () => {
  const bucket = tokenBucket({ rate: 10, burst: 20 })

  it('a cost above capacity is a distinct, non-retryable error', () => {
    const error = errorOf(() => step(bucket, undefined, 21, 0))
    expect(error.code).toBe('ERR_RL_COST_EXCEEDS_CAPACITY')
  })

  it('cost 0 inspects without charging', () => {
    const first = step(bucket, undefined, 5, 0)
    const peek = step(bucket, first.state, 0, 0)
    expect(peek.decision).toMatchObject({ allowed: true, remaining: 15 })
    expect(peek.state).toEqual(first.state)
  })

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('cost %s is refused', (cost) => {
    expect(errorOf(() => step(bucket, undefined, cost, 0)).code).toBe('ERR_RL_INVALID_COST')
  })

  it.each([-1, Number.NaN, MAX_TIME_MS + 1])('time %s is refused', (now) => {
    expect(errorOf(() => step(bucket, undefined, 1, now)).code).toBe('ERR_RL_INVALID_TIME')
  })

  it('floors a fractional time (a monotonic clock reads one)', () => {
    expect(step(bucket, undefined, 1, 1000.9)).toEqual(step(bucket, undefined, 1, 1000))
  })

  it('a bulk call costing 10 takes ten tokens', () => {
    const { decision } = step(bucket, undefined, 10, 0)
    expect(decision).toMatchObject({ allowed: true, remaining: 10, resetAfterMs: 1000 })
  })
})

describe('a clock that steps backwards', () => {
  // A step back of 5 s, beyond the 2 s fill time: the key moves to the new time with what it
  // holds (nothing), instead of waiting the 5 s out (it once answered retryAfterMs 5100).
  it('gives no free tokens, and moves a key whose last refill is beyond its fill time', () => {
    const bucket = tokenBucket({ rate: 10, burst: 20 })
    let result = step(bucket, undefined, 20, 10_000)
    result = step(bucket, result.state, 1, 5_000)
    expect(result.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100 })
    expect(result.state).toEqual([0, 5_000])
  })

  it('gives GCRA nothing remaining, never a negative count, when its TAT looks too far ahead', () => {
    const cell = gcra({ rate: 10, burst: 20 })
    let result = step(cell, undefined, 20, 10_000)
    const inspected = step(cell, result.state, 0, 9_950)
    expect(inspected.decision).toMatchObject({ allowed: true, remaining: 0 })
    result = step(cell, result.state, 1, 9_950)
    expect(result.decision).toMatchObject({ allowed: false, remaining: 0 })
  })

  it('keeps a fixed window in its stored window', () => {
    const window = fixedWindow({ limit: 2, windowMs: 60_000 })
    let result = step(window, undefined, 2, 61_000)
    result = step(window, result.state, 1, 59_000)
    expect(result.decision).toMatchObject({ allowed: false, retryAfterMs: 61_000 })
  })
})

describe('integer division', () => {
  it('is exact near 2^53, where a / b rounds', () => {
    const b = 3
    const a = 2 ** 53 - 2 // 9007199254740990 = 3 × 3002399751580330
    expect(floorDiv(a, b)).toBe(3002399751580330)
    expect(floorDiv(a - 1, b)).toBe(3002399751580329)
    expect(ceilDiv(a - 1, b)).toBe(3002399751580330)
    expect(floorDiv(-1, 600)).toBe(-1)
    expect(ceilDiv(1, 600)).toBe(1)
  })
})

describe('a limit lowered while a key still holds state', () => {
  // The state was kept under room for 20 with 15 used; the rule now allows 5.
  it.each([
    [gcra({ rate: 10, burst: 20 }), gcra({ rate: 10, burst: 5 })],
    [leakyBucket({ rate: 10, burst: 20 }), leakyBucket({ rate: 10, burst: 5 })],
    [fixedWindow({ limit: 20, windowMs: 60_000 }), fixedWindow({ limit: 5, windowMs: 60_000 })],
    [slidingLog({ limit: 20, windowMs: 60_000 }), slidingLog({ limit: 5, windowMs: 60_000 })],
    [slidingWindow({ limit: 20, windowMs: 60_000 }), slidingWindow({ limit: 5, windowMs: 60_000 })],
  ])('$name denies with nothing remaining', (before, after) => {
    const used = step(before, undefined, 15, 10_000)
    expect(used.decision.allowed).toBe(true)
    const next = step(after, used.state.slice(0, after.stateSize), 1, 10_000)
    expect(next.decision).toMatchObject({ allowed: false, remaining: 0, limit: 5 })
    // Cost 0 only inspects: it passes, with nothing remaining.
    const inspect = step(after, used.state.slice(0, after.stateSize), 0, 10_000)
    expect(inspect.decision).toMatchObject({ allowed: true, remaining: 0, limit: 5 })
  })

  it('lets a token bucket spend what it still holds, up to the new burst', () => {
    const used = step(tokenBucket({ rate: 10, burst: 20 }), undefined, 15, 10_000)
    const next = step(tokenBucket({ rate: 10, burst: 5 }), used.state, 1, 10_000)
    expect(next.decision).toMatchObject({ allowed: true, remaining: 4, limit: 5 })
  })
})
