// The leaky bucket as a queue: the spec's NGINX figure, and what must hold on every trace.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { type Algorithm, gcra, leakyQueue, type QueueParams, step } from './index.js'

/** Feeds arrivals (time in ms, cost) to one key; returns each decision and its release time. */
function run(algorithm: Algorithm, arrivals: ReadonlyArray<readonly [number, number?]>) {
  const state = new Array<number>(algorithm.stateSize).fill(0)
  let started = false
  return arrivals.map(([now, cost = 1]) => {
    if (!started) algorithm.init(state, 0, now)
    started = true
    const decision = algorithm.decide(state, 0, cost, now, true)
    return { now, decision, releasedAt: decision.allowed ? now + (decision.delayMs ?? 0) : -1 }
  })
}

const atOnce = (count: number) => Array.from({ length: count }, () => [0] as const)
const releases = (results: ReturnType<typeof run>) => results.map((r) => r.releasedAt)

describe('NGINX limit_req rate=10r/s burst=20, 25 requests at once', () => {
  it('serves #1 now, releases #2–#21 one every 100 ms (the last at 2.0 s), rejects #22–#25', () => {
    const results = run(leakyQueue({ rate: 10, burst: 20 }), atOnce(25))
    expect(releases(results)).toEqual([
      ...Array.from({ length: 21 }, (_, i) => i * 100),
      -1,
      -1,
      -1,
      -1,
    ])
    expect(results[0]!.decision).toEqual({
      allowed: true,
      remaining: 20,
      limit: 21,
      resetAfterMs: 100,
      retryAfterMs: undefined,
      delayMs: 0,
    })
    expect(results[21]!.decision).toEqual({
      allowed: false,
      remaining: 0,
      limit: 21,
      resetAfterMs: 2100,
      retryAfterMs: 100,
    })
  })

  it('with nodelay serves #1–#21 now, and their slots free up at 10/s over 2 s', () => {
    const queue = leakyQueue({ rate: 10, burst: 20, delay: 20 })
    const results = run(queue, [...atOnce(25), [100], [100], [1000], [2300]])
    expect(releases(results.slice(0, 25))).toEqual([...Array(21).fill(0), -1, -1, -1, -1])
    // One slot back after 100 ms; more by 1 s; the whole burst again once the last slot passed.
    expect(results.slice(25).map((r) => r.decision.allowed)).toEqual([true, false, true, true])
    expect(results[28]!.decision.remaining).toBe(20)
  })

  it('with delay: 10 serves the first 11 now and spaces the rest 100 ms apart', () => {
    const results = run(leakyQueue({ rate: 10, burst: 20, delay: 10 }), atOnce(25))
    expect(releases(results)).toEqual([
      ...Array(11).fill(0),
      ...Array.from({ length: 10 }, (_, i) => (i + 1) * 100),
      -1,
      -1,
      -1,
      -1,
    ])
  })

  it('refuses at once a request whose slot lies beyond maxWait, and says when it would fit', () => {
    const results = run(leakyQueue({ rate: 10, burst: 20, maxWaitMs: 450 }), atOnce(8))
    expect(releases(results)).toEqual([0, 100, 200, 300, 400, -1, -1, -1])
    expect(results[5]!.decision).toMatchObject({ allowed: false, retryAfterMs: 50, remaining: 16 })
  })

  it('keeps exact slots at a rate that is no whole number of ms apart (3 per second)', () => {
    const results = run(leakyQueue({ rate: 3, burst: 5 }), atOnce(7))
    // 333⅓ ms apart: the slots are 0, 333⅓, 666⅔, 1000, ... rounded up to whole ms.
    expect(releases(results)).toEqual([0, 334, 667, 1000, 1334, 1667, -1])
  })
})

describe('validation of the queue knobs', () => {
  it.each([
    [{ delay: 21 }, 'delay'],
    [{ delay: -1 }, 'delay'],
    [{ delay: 1.5 }, 'delay'],
    [{ maxWaitMs: -5 }, 'maxWaitMs'],
    [{ rate: 10_000_000 }, 'rate'],
  ])('refuses %o naming %s', (extra, field) => {
    expect(() => leakyQueue({ rate: 10, burst: 20, ...extra })).toThrow(
      expect.objectContaining({ code: 'ERR_RL_INVALID_RULE', field }),
    )
  })

  it('refuses a cost above the burst plus the one being served', () => {
    expect(step(leakyQueue({ rate: 10, burst: 20 }), undefined, 21, 0).decision.allowed).toBe(true)
    expect(() => step(leakyQueue({ rate: 10, burst: 20 }), undefined, 22, 0)).toThrow(
      expect.objectContaining({ code: 'ERR_RL_COST_EXCEEDS_CAPACITY' }),
    )
  })
})

const queueParams = fc.record({
  rate: fc.integer({ min: 1, max: 1000 }),
  periodMs: fc.integer({ min: 1, max: 120_000 }),
  burst: fc.integer({ min: 1, max: 60 }),
})
const gapsFor = ({ rate, periodMs }: { rate: number; periodMs: number }) =>
  fc.array(
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: Math.ceil((3 * periodMs) / rate) })),
    {
      minLength: 1,
      maxLength: 120,
    },
  )
const timesOf = (gaps: readonly number[]) => {
  let now = 1_000_000
  return gaps.map((gap) => {
    now += gap
    return [now] as const
  })
}

/**
 * NGINX's own formulation, independent of the slot: the excess of the last admitted request
 * (in ticks) and its time. A request's excess is the last one's, drained by the time since, plus
 * one emission interval; over the burst it is rejected, else it waits (excess − delay) / rate.
 */
function nginx(params: QueueParams & { delay: number }, times: ReadonlyArray<readonly [number]>) {
  const divisor = gcd(params.rate, params.periodMs ?? 1000)
  const perMs = params.rate / divisor
  const interval = (params.periodMs ?? 1000) / divisor
  let last: { excess: number; at: number } | undefined
  return times.map(([now]) => {
    const excess =
      last === undefined ? 0 : Math.max(0, last.excess - (now - last.at) * perMs + interval)
    if (excess > params.burst * interval) return -1
    last = { excess, at: now }
    return now + Math.ceil(Math.max(0, excess - params.delay * interval) / perMs)
  })
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b)
}

describe('properties', () => {
  it('admits and releases every request exactly when NGINX would', () => {
    const input = queueParams.chain((params) =>
      fc.tuple(fc.constant(params), fc.integer({ min: 0, max: params.burst }), gapsFor(params)),
    )
    fc.assert(
      fc.property(input, ([params, delay, gaps]) => {
        const times = timesOf(gaps)
        const ours = releases(run(leakyQueue({ ...params, delay }), times))
        expect(ours).toEqual(nginx({ ...params, delay }, times))
      }),
    )
  })

  it('never holds more than the burst in line, and releases no two waiting requests closer than the rate allows', () => {
    fc.assert(
      fc.property(
        queueParams.chain((p) => fc.tuple(fc.constant(p), gapsFor(p))),
        ([p, gaps]) => {
          const results = run(leakyQueue(p), timesOf(gaps))
          const served = results.filter((r) => r.decision.allowed)
          for (const { now } of results) {
            expect(
              served.filter((r) => r.now <= now && r.releasedAt > now).length,
            ).toBeLessThanOrEqual(p.burst)
          }
          const waited = served.filter((r) => (r.decision.delayMs ?? 0) > 0)
          for (let i = 1; i < waited.length; i++) {
            expect(waited[i]!.releasedAt - waited[i - 1]!.releasedAt).toBeGreaterThanOrEqual(
              Math.floor(p.periodMs / p.rate),
            )
          }
        },
      ),
    )
  })

  it('with nodelay makes the meter`s decisions: GCRA with one more in its burst', () => {
    const input = queueParams.chain((params) =>
      fc.tuple(
        fc.constant(params),
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: Math.ceil((3 * params.periodMs) / params.rate) }),
            cost: fc.integer({ min: 0, max: params.burst + 1 }),
          }),
          { minLength: 1, maxLength: 100 },
        ),
      ),
    )
    const withoutDelay = ({ delayMs: _delay, ...rest }: Decision) => rest
    fc.assert(
      fc.property(input, ([params, arrivals]) => {
        let now = 5000
        const trace = arrivals.map(({ gap, cost }) => {
          now += gap
          return [now, cost] as const
        })
        const queue = run(leakyQueue({ ...params, delay: params.burst }), trace)
        const meter = run(gcra({ ...params, burst: params.burst + 1 }), trace)
        expect(queue.map((r) => withoutDelay(r.decision))).toEqual(meter.map((r) => r.decision))
        expect(queue.every((r) => !r.decision.allowed || (r.decision.delayMs ?? 0) === 0)).toBe(
          true,
        )
      }),
    )
  })

  it('gives a slot back: a refund at once leaves the next arrival the slot the refunded one had', () => {
    fc.assert(
      fc.property(
        queueParams.chain((p) => fc.tuple(fc.constant(p), gapsFor(p))),
        ([p, gaps]) => {
          const queue = leakyQueue(p)
          const times = timesOf(gaps)
          const state = [0]
          queue.init(state, 0, times[0]![0])
          for (const [now] of times) {
            const first = queue.decide(state, 0, 1, now, true)
            if (!first.allowed) continue
            queue.refund(state, 0, 1, now, now)
            expect(queue.decide(state, 0, 1, now, true)).toEqual(first)
          }
        },
      ),
    )
  })
})
