import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_TIME_MS } from './integer.js'
import { costTooHigh } from './params.js'
import { checkCost, checkTime, wholeMs, wholeTime } from './step.js'

/** What `f` returns, or the code and message of what it throws. */
function outcome(f: () => number): unknown {
  try {
    return f()
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown }
    return { code, message }
  }
}

describe('wholeTime', () => {
  it('floors a time and refuses a non-time exactly as wholeMs then checkTime', () => {
    const times = fc.oneof(
      fc.double(),
      fc.double({ min: -1, max: MAX_TIME_MS + 2 }),
      fc.integer({ min: MAX_TIME_MS - 2, max: MAX_TIME_MS + 2 }),
      fc.constantFrom(0, -0, 0.5, MAX_TIME_MS, MAX_TIME_MS + 0.5, Number.NaN, Infinity),
      fc.anything(),
    )
    fc.assert(
      fc.property(times, (now) => {
        const separate = () => {
          const whole = wholeMs(now as number)
          checkTime(whole)
          return whole
        }
        expect(outcome(() => wholeTime(now as number))).toEqual(outcome(separate))
      }),
      { numRuns: 20_000 },
    )
  })
})

describe('checkCost', () => {
  it('with a limit, refuses exactly as the cost check then the capacity check the stores made', () => {
    const numbers = fc.oneof(
      fc.integer({ min: -3, max: 40 }),
      fc.double(),
      fc.constantFrom(
        0,
        -0,
        0.5,
        Number.MAX_SAFE_INTEGER,
        Number.MAX_SAFE_INTEGER + 1,
        Number.NaN,
        Infinity,
      ),
      fc.anything(),
    )
    fc.assert(
      fc.property(numbers, fc.integer({ min: 0, max: 40 }), (cost, limit) => {
        const separate = () => {
          checkCost(cost as number)
          if ((cost as number) > limit) throw costTooHigh(cost as number, limit)
          return 0
        }
        const combined = () => {
          checkCost(cost as number, limit)
          return 0
        }
        expect(outcome(combined)).toEqual(outcome(separate))
      }),
      { numRuns: 20_000 },
    )
  })

  it('without a limit, checks the cost alone', () => {
    expect(() => checkCost(Number.MAX_SAFE_INTEGER)).not.toThrow()
    expect(() => checkCost(-1)).toThrow('[tollgate] cost must be a whole number ≥ 0, got -1')
  })
})
