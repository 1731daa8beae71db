// Leaky queue rules in the local limiter: calls wait for their slot, a full line refuses.
import { manualTime } from '@tollgate/test-utils'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LocalQueueRefusedError, type LocalRule, localLimiter } from './index.js'

const START = 1_700_000_000_000

function setup(rules: LocalRule | LocalRule[]) {
  const time = manualTime(START)
  const limiter = localLimiter(rules, { clock: time.clock, timers: time.timers })
  return { time, limiter }
}

/** Starts `count` callers at once; each outcome is its release time from START, or 'refused'. */
async function race(rule: LocalRule, count: number) {
  const { time, limiter } = setup(rule)
  const outcomes: Array<number | 'refused'> = Array.from({ length: count })
  const callers = outcomes.map((_, i) =>
    limiter.acquire().then(
      () => {
        outcomes[i] = time.now() - START
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(LocalQueueRefusedError)
        outcomes[i] = 'refused'
      },
    ),
  )
  await time.runAll()
  await Promise.all(callers)
  return { outcomes, time, limiter }
}

const spec004 = { algorithm: 'leaky_queue', rate: 10, period: '1s', burst: 20 } as const
const refusedFour = ['refused', 'refused', 'refused', 'refused']

describe('spec 004: rate 10/s, burst 20, 25 callers at once', () => {
  it('#1 now, #2–#21 every 100 ms ending at 2.0 s, #22–#25 refused, from one timer', async () => {
    const { outcomes, time, limiter } = await race(spec004, 25)
    const slots = Array.from({ length: 21 }, (_, i) => i * 100)
    expect(outcomes).toEqual([...slots, ...refusedFour])
    expect(time.mostPending()).toBe(1)
    expect(limiter.queued()).toBe(0)
  })

  it('nodelay: #1–#21 at once, #22–#25 refused', async () => {
    const { outcomes } = await race({ ...spec004, nodelay: true }, 25)
    expect(outcomes).toEqual([...Array<number>(21).fill(0), ...refusedFour])
  })

  it('delay 10: the first 11 at once, then 100 ms apart', async () => {
    const { outcomes } = await race({ ...spec004, delay: 10 }, 25)
    const spaced = Array.from({ length: 10 }, (_, i) => (i + 1) * 100)
    expect(outcomes).toEqual([...Array<number>(11).fill(0), ...spaced, ...refusedFour])
  })

  it('maxWait 500 ms: a slot further away refuses, naming the rule and when to retry', async () => {
    const { time, limiter } = setup({ ...spec004, id: 'vendor', maxWait: '500ms' })
    const admitted = Array.from({ length: 6 }, () => limiter.acquire())
    const error = await limiter.acquire().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LocalQueueRefusedError)
    expect(error).toMatchObject({ rule: 'vendor', retryAfterMs: 100 })
    expect(limiter.queued()).toBe(5)
    await time.runAll()
    await Promise.all(admitted)
  })
})

describe('tryAcquire and reserve on a queue rule', () => {
  it('tryAcquire admits only what needs no wait; reserve says how long until the slot', async () => {
    const { time, limiter } = setup(spec004)
    expect(limiter.tryAcquire()).toBe(true)
    expect(limiter.tryAcquire()).toBe(false) // its slot is 100 ms away: it would wait
    expect(limiter.reserve()).toBe(100)
    expect(limiter.reserve(3)).toBe(300)
    for (let i = 0; i < 20; i++) void limiter.acquire()
    expect(limiter.reserve()).toBe(Number.POSITIVE_INFINITY) // the line is full
    await time.advance(100)
    expect(limiter.reserve()).toBe(2000) // one left the line: a seat at its end
  })

  it('with delay, tryAcquire takes the calls served at once', () => {
    const { limiter } = setup({ ...spec004, delay: 2 })
    expect([1, 2, 3, 4].map(() => limiter.tryAcquire())).toEqual([true, true, true, false])
    expect(limiter.reserve()).toBe(100)
  })

  it('behind a bucket: waits for the bucket, then for its slot', async () => {
    const { time, limiter } = setup([
      { algorithm: 'token_bucket', rate: 1, period: '1s', burst: 1 },
      spec004,
    ])
    const released: number[] = []
    const calls = [1, 2].map(() => limiter.acquire().then(() => released.push(time.now() - START)))
    expect(limiter.reserve()).toBe(2000)
    await time.runAll()
    await Promise.all(calls)
    expect(released).toEqual([0, 1000]) // the queue's line had drained by the bucket's refill
  })
})

describe('aborts', () => {
  it('an aborted seated caller gives its slot back: the callers behind it move up', async () => {
    const { time, limiter } = setup(spec004)
    const released: number[] = []
    const controllers = Array.from({ length: 5 }, () => new AbortController())
    const calls = controllers.map((controller, i) =>
      limiter.acquire({ signal: controller.signal }).then(
        () => released.push(i),
        (reason: unknown) => expect(reason).toBe('gave up'),
      ),
    )
    await time.advance(0)
    expect(limiter.reserve()).toBe(500)
    controllers[1]!.abort('gave up') // seated for 100 ms
    expect(limiter.queued()).toBe(3)
    expect(limiter.reserve()).toBe(400)
    await time.advance(100)
    expect(released).toEqual([0, 2]) // #3 took #2's slot
    await time.advance(200)
    expect(released).toEqual([0, 2, 3, 4])
    await Promise.all(calls)
    expect(time.pending()).toBe(0)
  })

  it('an abort after release gives nothing back', async () => {
    const { time, limiter } = setup(spec004)
    const controller = new AbortController()
    await limiter.acquire({ signal: controller.signal })
    controller.abort()
    expect(limiter.reserve()).toBe(100)
    expect(time.pending()).toBe(0)
  })
})

describe('any arrivals and aborts', () => {
  const config = fc.record({
    rate: fc.integer({ min: 1, max: 20 }),
    burst: fc.integer({ min: 2, max: 10 }),
    delay: fc.nat(10),
  })
  const calls = fc.array(
    fc.record({
      gap: fc.nat(150),
      cost: fc.integer({ min: 1, max: 3 }),
      abortAfter: fc.option(fc.nat(400)),
    }),
    {
      minLength: 1,
      maxLength: 50,
    },
  )

  it('releases are never closer than the rate allows beyond the delay allowance; at most burst wait', async () => {
    await fc.assert(
      fc.asyncProperty(config, calls, async (params, arrivals) => {
        const burst = params.burst
        const delay = Math.min(params.delay, burst)
        const rule = { algorithm: 'leaky_queue', rate: params.rate, period: '1s', burst, delay }
        const { time, limiter } = setup(rule as LocalRule)
        const intervalMs = 1000 / params.rate
        const released: Array<[at: number, cost: number]> = []
        const pending: Promise<unknown>[] = []
        let mostWaiting = 0
        for (const arrival of arrivals) {
          await time.advance(arrival.gap)
          const controller = new AbortController()
          pending.push(
            limiter
              .acquire({ cost: arrival.cost, signal: controller.signal })
              .then(() => released.push([time.now(), arrival.cost]))
              .catch(() => undefined),
          )
          // The abort fires on the test's manual timers, beside the limiter's one.
          if (arrival.abortAfter !== null) {
            time.timers.setTimeout(() => controller.abort(), arrival.abortAfter)
          }
          mostWaiting = Math.max(mostWaiting, limiter.queued())
        }
        await time.runAll()
        await Promise.all(pending)
        expect(mostWaiting).toBeLessThanOrEqual(burst)
        expect(limiter.queued()).toBe(0)
        // Releases j after i: at least the units of i+1..j less the delay allowance apart, in
        // emission intervals (ms rounded up).
        for (let i = 0; i < released.length; i++) {
          let units = 0
          for (let j = i + 1; j < released.length; j++) {
            units += released[j]![1]
            const least = Math.floor((units - delay) * intervalMs) - 1
            expect(released[j]![0] - released[i]![0]).toBeGreaterThanOrEqual(least)
          }
        }
      }),
      { numRuns: 150 },
    )
  })
})
