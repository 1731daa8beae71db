import { slidingLog } from '@tollgate/core'
import { createScheduler, isRateLimitError } from '@tollgate/core/store'
import { manualTime } from '@tollgate/test-utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type LocalRule, localLimiter } from './index.js'

const START = 1_700_000_000_000

function setup(rules: LocalRule | LocalRule[]) {
  const time = manualTime(START)
  const limiter = localLimiter(rules, { clock: time.clock, timers: time.timers })
  return { time, limiter }
}

describe('tryAcquire, acquire and reserve', () => {
  it('a bucket of 3 at 1 per second: three now, then one a second, as the server counts', async () => {
    const { time, limiter } = setup({ algorithm: 'token_bucket', rate: 1, period: '1s', burst: 3 })
    expect([1, 2, 3, 4].map(() => limiter.tryAcquire())).toEqual([true, true, true, false])
    expect(limiter.reserve()).toBe(1000)
    expect(limiter.reserve(2)).toBe(2000)
    let passed = false
    void limiter.acquire().then(() => {
      passed = true
    })
    await time.advance(999)
    expect(passed).toBe(false)
    await time.advance(1)
    expect(passed).toBe(true)
    expect(limiter.tryAcquire()).toBe(false)
  })

  it('queues first come, first served: a small call waits behind a large one', async () => {
    const { time, limiter } = setup({ algorithm: 'gcra', rate: 10, period: '1s', burst: 5 })
    for (let i = 0; i < 5; i++) limiter.tryAcquire()
    const order: string[] = []
    void limiter.acquire({ cost: 5 }).then(() => order.push('large'))
    void limiter.acquire({ cost: 1 }).then(() => order.push('small'))
    expect(limiter.tryAcquire()).toBe(false) // queued calls go first
    expect(limiter.reserve()).toBe(700) // behind both: 500 ms for the large one, 100 ms each after
    await time.advance(500)
    expect(order).toEqual(['large'])
    await time.advance(100)
    expect(order).toEqual(['large', 'small'])
  })

  it('an abort while waiting rejects with the reason, takes nothing and lets the next one in', async () => {
    const { time, limiter } = setup({ algorithm: 'fixed_window', limit: 1, window: '1s' })
    limiter.tryAcquire()
    const controller = new AbortController()
    const aborted = limiter.acquire({ signal: controller.signal })
    const next = limiter.acquire()
    controller.abort(new Error('gave up'))
    await expect(aborted).rejects.toThrow('gave up')
    expect(limiter.queued()).toBe(1)
    await time.advance(1000)
    await next
    expect(limiter.queued()).toBe(0)
    await expect(limiter.acquire({ signal: AbortSignal.abort('early') })).rejects.toBe('early')
  })

  it('several rules: a call passes when all admit it, and waits for the slowest', () => {
    const { limiter } = setup([
      { algorithm: 'token_bucket', rate: 10, period: '1s', burst: 10 },
      { algorithm: 'sliding_log', limit: 3, window: '1m' },
    ])
    expect([1, 2, 3, 4].map(() => limiter.tryAcquire())).toEqual([true, true, true, false])
    expect(limiter.reserve()).toBe(60_000)
  })

  it('refuses bad rules naming the rule and field, and costs no rule can admit', async () => {
    expect(() =>
      localLimiter({ id: 'vendor', algorithm: 'token_bucket', rate: 0, burst: 1 }),
    ).toThrow(/vendor.*rate/s)
    expect(() => localLimiter([])).toThrow(/at least one rule/)
    const { limiter } = setup({ algorithm: 'token_bucket', rate: 1, burst: 2 })
    const error = await limiter.acquire({ cost: 3 }).catch((e: unknown) => e)
    expect(isRateLimitError(error) && error.code).toBe('ERR_RL_COST_EXCEEDS_CAPACITY')
    expect(() => limiter.tryAcquire(1.5)).toThrow(/cost/)
  })

  it('takes a compiled algorithm too (the extension point for other shapes)', () => {
    const { limiter } = setup(slidingLog({ limit: 2, windowMs: 500 }))
    expect([1, 2, 3].map(() => limiter.tryAcquire())).toEqual([true, true, false])
  })

  it('a wait longer than a 32-bit timer allows is re-armed, not fired early', async () => {
    const { time, limiter } = setup({ algorithm: 'fixed_window', limit: 1, window: '30 days' })
    limiter.tryAcquire()
    let passed = false
    void limiter.acquire().then(() => {
      passed = true
    })
    const windowEnd = Math.ceil(START / 2_592_000_000) * 2_592_000_000
    await time.advance(2_147_483_647)
    expect(passed).toBe(windowEnd - START <= 2_147_483_647)
    await time.advance(windowEnd - time.now())
    expect(passed).toBe(true)
  })
})

/** The most admissions in any `span` ms, and in any window aligned to `span`. */
function busiest(times: number[], span: number) {
  let rolling = 0
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= span) j++
    rolling = Math.max(rolling, i - j + 1)
  }
  const aligned = new Map<number, number>()
  for (const t of times)
    aligned.set(Math.floor(t / span), (aligned.get(Math.floor(t / span)) ?? 0) + 1)
  return { rolling, aligned: Math.max(...aligned.values()) }
}

describe('100 concurrent callers, one budget of 10 per second', () => {
  const cases: Array<[string, LocalRule, (b: ReturnType<typeof busiest>) => void]> = [
    [
      'sliding_log',
      { algorithm: 'sliding_log', limit: 10, window: '1s' },
      (b) => expect(b.rolling).toBe(10),
    ],
    [
      'fixed_window',
      { algorithm: 'fixed_window', limit: 10, window: '1s' },
      (b) => expect(b.aligned).toBe(10),
    ],
    // A bucket of 10 refilling 10/s may spend its burst and a second's refill within one second.
    [
      'token_bucket',
      { algorithm: 'token_bucket', rate: 10, period: '1s', burst: 10 },
      (b) => expect(b.rolling).toBe(19),
    ],
    [
      'gcra, burst 1',
      { algorithm: 'gcra', rate: 10, period: '1s', burst: 1 },
      (b) => expect(b.rolling).toBe(10),
    ],
  ]
  it.each(cases)(
    '%s: never more than the budget leaves in any second',
    async (_name, rule, check) => {
      const { time, limiter } = setup(rule)
      const admitted: number[] = []
      const callers = Array.from({ length: 100 }, () =>
        limiter.acquire().then(() => admitted.push(time.now())),
      )
      await time.runAll()
      await Promise.all(callers)
      expect(admitted).toHaveLength(100)
      check(busiest(admitted, 1000))
      expect(time.mostPending()).toBe(1) // one timer for the whole queue
    },
  )

  it('holds for any arrival pattern, costs and aborts (sliding log: exact in every second)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            delay: fc.nat(300),
            cost: fc.integer({ min: 1, max: 3 }),
            abort: fc.boolean(),
          }),
          {
            minLength: 1,
            maxLength: 60,
          },
        ),
        async (calls) => {
          const { time, limiter } = setup({ algorithm: 'sliding_log', limit: 10, window: '1s' })
          const spent: Array<[number, number]> = []
          const pending: Promise<unknown>[] = []
          for (const call of calls) {
            await time.advance(call.delay)
            const controller = new AbortController()
            pending.push(
              limiter
                .acquire({ cost: call.cost, signal: controller.signal })
                .then(() => spent.push([time.now(), call.cost]))
                .catch(() => undefined),
            )
            if (call.abort) controller.abort()
          }
          await time.runAll()
          await Promise.all(pending)
          for (const [t] of spent) {
            const inWindow = spent
              .filter(([u]) => u <= t && u > t - 1000)
              .reduce((n, [, c]) => n + c, 0)
            expect(inWindow).toBeLessThanOrEqual(10)
          }
          // Every call that was not aborted got through (an abort after passing changes nothing).
          expect(spent.length).toBeGreaterThanOrEqual(calls.filter((c) => !c.abort).length)
          expect(limiter.queued()).toBe(0)
        },
      ),
      { numRuns: 100 },
    )
  })
})

it('a shared scheduler serves many limiters with one timer', async () => {
  const time = manualTime(START)
  const scheduler = createScheduler({ clock: time.clock, timers: time.timers })
  const limiters = Array.from({ length: 5 }, (_, i) =>
    localLimiter({ algorithm: 'fixed_window', limit: 1, window: `${i + 1}s` }, { scheduler }),
  )
  const calls = limiters.flatMap((l) => [l.acquire(), l.acquire()])
  await time.runAll()
  await Promise.all(calls)
  expect(time.mostPending()).toBe(1)
})
