// The limiter's clock: fractions floored (a monotonic clock works), a clock that fails decided
// like a store that fails, and a step back counted, warned about once and never a lockout.
import { describe, expect, it } from 'vitest'
import { observedLimiter } from '../observe/observed-limiter.js'
import type { RuleConfig } from '../rules/types.js'
import { createLimiter } from './create-limiter.js'
import { failureRule, PAYMENT } from './test-stores.js'
import type { StoreErrorContext } from './types.js'

const START = 1_800_000_000_000

const perSecond: RuleConfig = {
  id: 'per-second',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 10,
  period: '1s',
  burst: 20,
}

function warnings() {
  const lines: string[] = []
  return { lines, logger: { warn: (line: string) => lines.push(line) } }
}

describe('a monotonic clock', () => {
  it('is read in whole ms: performance.timeOrigin + performance.now() decides', () => {
    const limiter = createLimiter({
      rules: [perSecond],
      clock: { now: () => performance.timeOrigin + performance.now() },
    })
    const verdict = limiter.decide(PAYMENT) as {
      allowed: boolean
      storeFailed?: boolean
      at: number
    }
    expect(verdict.allowed).toBe(true)
    expect(verdict.storeFailed).not.toBe(true)
    expect(Number.isSafeInteger(verdict.at)).toBe(true)
  })

  it('floors a fraction, in a clock and in a given now', () => {
    let now = START + 0.9
    const limiter = createLimiter({ rules: [perSecond], clock: { now: () => now } })
    expect(limiter.decide(PAYMENT)).toMatchObject({ at: START })
    now = START + 1.5
    expect(limiter.decide(PAYMENT, { now: START + 2.25 })).toMatchObject({ at: START + 2 })
    expect(limiter.check('ip:192.0.2.1', 'per-second')).toMatchObject({ remaining: 17 })
  })
})

const BROKEN_CLOCKS: readonly (readonly [string, () => unknown])[] = [
  ['returns NaN', () => Number.NaN],
  ['returns a negative number', () => -1],
  ['returns Infinity', () => Number.POSITIVE_INFINITY],
  ['returns a string', () => '1800000000000'],
  ['returns nothing', () => undefined],
  ['returns a time past 2109', () => 2 ** 43],
  [
    'throws',
    () => {
      throw new Error('clock unavailable')
    },
  ],
]

describe.each(BROKEN_CLOCKS)('a clock that %s', (_name, now) => {
  const clock = { now: now as () => number }

  it('lets fail-open rules through and denies on fail-closed ones, warning once', () => {
    const { lines, logger } = warnings()
    const open = createLimiter({ rules: [failureRule('open', 'open')], clock, logger })
    for (let i = 0; i < 3; i++) {
      expect(open.decide(PAYMENT)).toMatchObject({ allowed: true, storeFailed: true })
    }
    const closed = createLimiter({ rules: [failureRule('closed', 'closed')], clock, logger })
    expect(closed.decide(PAYMENT)).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
      storeFailed: true,
    })
    expect(closed.check('ip:192.0.2.1', 'closed')).toMatchObject({
      allowed: false,
      storeFailed: true,
    })
    expect(lines.filter((line) => line.includes('WARN_CLOCK_FAILED'))).toHaveLength(2)
    expect(lines.every((line) => line.startsWith('[tollgate] WARN_CLOCK_FAILED: '))).toBe(true)
  })

  it('warns of the clock, not of the store, whatever call it failed, observed or not', () => {
    for (const observed of [false, true]) {
      const { lines, logger } = warnings()
      let broken = false
      const options = {
        rules: [failureRule('open', 'open'), failureRule('closed', 'closed')],
        clock: { now: () => (broken ? now() : START) } as { now: () => number },
        logger,
      }
      const limiter = observed
        ? observedLimiter({ ...options, observers: [{ observe: () => {} }] })
        : createLimiter(options)
      const verdict = limiter.decide(PAYMENT)
      broken = true
      limiter.decide(PAYMENT)
      limiter.refund(verdict as Exclude<typeof verdict, Promise<unknown>>)
      limiter.check('ip:192.0.2.1', 'open')
      expect(lines.length, `observed: ${observed}`).toBeGreaterThan(0)
      expect(new Set(lines), `observed: ${observed}`).toEqual(
        new Set([
          "[tollgate] WARN_CLOCK_FAILED: clock.now() gave no time; each rule's onStoreError decides until it does",
        ]),
      )
    }
  })

  it('hands onError an ERR_RL_CLOCK_FAILED, and refunds nothing without a time', () => {
    const errors: [unknown, StoreErrorContext][] = []
    let broken = false
    const limiter = createLimiter({
      rules: [failureRule('open', 'open')],
      clock: { now: () => (broken ? now() : START) } as { now: () => number },
      onError: (error, context) => errors.push([error, context]),
    })
    const verdict = limiter.decide(PAYMENT)
    expect(verdict).toMatchObject({ allowed: true, decisions: [{ rule: 'open' }] })
    broken = true
    expect(limiter.decide(PAYMENT)).toMatchObject({ allowed: true, storeFailed: true, at: START })
    limiter.refund(verdict as Exclude<typeof verdict, Promise<unknown>>)
    expect(errors.map(([error, context]) => [(error as { code: string }).code, context])).toEqual([
      ['ERR_RL_CLOCK_FAILED', { operation: 'consume', rules: ['open'], failClosed: false }],
      ['ERR_RL_CLOCK_FAILED', { operation: 'refund', rules: ['open'], failClosed: false }],
    ])
  })
})

describe('a clock that steps back', () => {
  it('is counted and warned about once', () => {
    const { lines, logger } = warnings()
    let now = START
    const limiter = createLimiter({ rules: [perSecond], clock: { now: () => now }, logger })
    limiter.decide(PAYMENT)
    now -= 3 * 3_600_000
    limiter.decide(PAYMENT)
    now += 1000
    limiter.decide(PAYMENT)
    now -= 5
    limiter.decide(PAYMENT)
    expect(limiter.clockStepsBack).toBe(2)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^\[tollgate\] WARN_CLOCK_STEPPED_BACK: /)
  })

  // The reproduction: a drained token bucket (10 per second, burst 20) was told to come back in
  // 10,800,100 ms after an NTP correction of 3 hours.
  it('leaves a drained key waiting for its next token, not the whole step', () => {
    let now = START
    const limiter = createLimiter({ rules: [perSecond], clock: { now: () => now }, logger: false })
    for (let i = 0; i < 20; i++) limiter.decide(PAYMENT)
    now -= 3 * 3_600_000
    const verdict = limiter.decide(PAYMENT) as {
      allowed: boolean
      deciding: { retryAfterMs: number }
    }
    expect(verdict.allowed).toBe(false)
    expect(verdict.deciding.retryAfterMs).toBe(100)
    now += 100
    expect(limiter.decide(PAYMENT)).toMatchObject({ allowed: true })
  })
})
