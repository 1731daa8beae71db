// Every worked figure of the specification, run through the real algorithms.
import { describe, expect, it } from 'vitest'
import type { Algorithm, AlgorithmState } from './index.js'
import { fixedWindow, gcra, slidingLog, slidingWindow, step, tokenBucket } from './index.js'

/** Feeds arrivals (time in ms, cost) to one key and returns every decision. */
function run(algorithm: Algorithm, arrivals: ReadonlyArray<readonly [number, number?]>) {
  let state: AlgorithmState | undefined
  return arrivals.map(([now, cost = 1]) => {
    const result = step(algorithm, state, cost, now)
    state = result.state
    return result.decision
  })
}

const repeat = (count: number, now: number) => Array.from({ length: count }, () => [now] as const)
const admitted = (decisions: ReadonlyArray<{ allowed: boolean }>) =>
  decisions.filter((d) => d.allowed).length

describe('token bucket, Free plan (10 per second, burst 20)', () => {
  const decisions = run(tokenBucket({ rate: 10, burst: 20 }), [
    ...repeat(25, 0),
    ...repeat(8, 500),
    [2500],
  ])

  it('admits 20 of 25 at t=0, 5 of 8 at 0.5 s, and the one at 2.5 s with 19 left', () => {
    expect(admitted(decisions.slice(0, 25))).toBe(20)
    expect(decisions.slice(0, 20).every((d) => d.allowed)).toBe(true)
    expect(admitted(decisions.slice(25, 33))).toBe(5)
    expect(decisions[33]).toEqual({
      allowed: true,
      remaining: 19,
      limit: 20,
      resetAfterMs: 100,
      retryAfterMs: undefined,
    })
  })

  it('tells the denied ones when a token arrives', () => {
    expect(decisions[20]).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100 })
    expect(decisions[20]?.resetAfterMs).toBe(2000)
    expect(decisions[30]).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100 })
  })
})

describe('one burst across a minute boundary (100 per 60 s, 10 per second from 12:00:50 to 12:01:10)', () => {
  // t = 0 is 12:00:00; 200 arrivals, one every 100 ms from 50 s.
  const arrivals = Array.from({ length: 200 }, (_, i) => [50_000 + 100 * i] as const)
  const window = { limit: 100, windowMs: 60_000 }

  it.each([
    ['fixed window', fixedWindow(window), 200],
    ['sliding log', slidingLog(window), 100],
    ['sliding window counter', slidingWindow(window), 116],
    ['token bucket (burst 100)', tokenBucket({ rate: 100, periodMs: 60_000, burst: 100 }), 133],
    ['GCRA (burst 100)', gcra({ rate: 100, periodMs: 60_000, burst: 100 }), 133],
  ])('%s admits %#', (_name, algorithm, expected) => {
    expect(admitted(run(algorithm, arrivals))).toBe(expected)
  })
})

describe('sliding window counter, ordinary traffic', () => {
  it('previous 80, current 30, 20 s into the window: allowed with 15 left', () => {
    const counter = slidingWindow({ limit: 100, windowMs: 60_000 })
    // state: [window start, previous count, current count]; 12:01:00 = 60 s.
    const { decision } = step(counter, [60_000, 80, 30], 1, 80_000)
    expect(decision).toMatchObject({ allowed: true, remaining: 15, limit: 100 })
  })
})

describe('GCRA, Free plan: 21 requests at t=0 on a fresh key', () => {
  it('admits 20 and denies the 21st with a retry of 100 ms', () => {
    const decisions = run(gcra({ rate: 10, burst: 20 }), repeat(21, 0))
    expect(admitted(decisions.slice(0, 20))).toBe(20)
    expect(decisions[19]).toMatchObject({ allowed: true, remaining: 0, resetAfterMs: 2000 })
    expect(decisions[20]).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 100 })
  })
})

describe('sliding log for login attempts (5 per 60 s)', () => {
  const log = slidingLog({ limit: 5, windowMs: 60_000 })
  const attempts = [1000, 2000, 3000, 4000, 5000, 6000, 30_000, 60_500, 61_000]
  const decisions = run(
    log,
    attempts.map((t) => [t] as const),
  )

  it('passes 12:00:01–05, denies later ones until 12:01:01, then admits again', () => {
    expect(decisions.map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      true,
    ])
  })

  it('denied attempts do not move the retry time', () => {
    expect(decisions[5]?.retryAfterMs).toBe(61_000 - 6000)
    expect(decisions[6]?.retryAfterMs).toBe(61_000 - 30_000)
    expect(decisions[7]?.retryAfterMs).toBe(61_000 - 60_500)
  })
})
