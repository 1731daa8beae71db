import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_TIME_MS } from './integer.js'
import { checkTime, wholeMs, wholeTime } from './step.js'

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
