// Sub-window counters against the exact sliding log: a sub-window's requests are forgotten at
// most one sub-window early, so the error is bounded by what one sub-window's span admits and
// shrinks as the count of buckets grows. (The figures in docs/concepts/algorithms.md come from
// `pnpm --filter @tollgate/benchmarks bench:accuracy`.)
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type Algorithm, slidingLog, slidingWindow, step } from './index.js'

const LIMIT = 100
const WINDOW_MS = 60_000

function admitted(algorithm: Algorithm, arrivals: readonly number[]): number[] {
  let state: readonly number[] | undefined
  const passed: number[] = []
  for (const at of arrivals) {
    const result = step(algorithm, state, 1, at)
    state = result.state
    if (result.decision.allowed) passed.push(at)
  }
  return passed
}

/** The most of `times` (sorted) inside any span of `spanMs` ms: (t − span, t]. */
function densest(times: readonly number[], spanMs: number): number {
  let most = 0
  let first = 0
  for (let last = 0; last < times.length; last++) {
    while (times[first]! <= times[last]! - spanMs) first++
    most = Math.max(most, last - first + 1)
  }
  return most
}

const counters = (buckets: number) => slidingWindow({ limit: LIMIT, windowMs: WINDOW_MS, buckets })

/** Bursty traffic: busy and quiet spells, arrivals a few ms to a few seconds apart. */
const trafficArb = fc
  .array(
    fc.record({
      gap: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 200, max: 5000 })),
      repeat: fc.integer({ min: 1, max: 40 }),
    }),
    { minLength: 20, maxLength: 120 },
  )
  .map((spells) => {
    const times: number[] = []
    let now = 1_800_000_000_000
    for (const { gap, repeat } of spells) {
      for (let i = 0; i < repeat; i++) {
        now += gap
        times.push(now)
      }
    }
    return times
  })

describe('sub-window counters', () => {
  it("are exact on the spec's minute-boundary burst: 100 in the minute to 12:01:10, as the log", () => {
    const noon = Date.UTC(2026, 11, 1, 12)
    const burst = Array.from({ length: 200 }, (_, i) => noon + 50_000 + i * 100)
    const inMinute = (times: number[]) =>
      times.filter((t) => t > noon + 10_000 && t <= noon + 70_000).length
    expect(inMinute(admitted(slidingLog({ limit: LIMIT, windowMs: WINDOW_MS }), burst))).toBe(100)
    // The two counters assume the last minute's 100 were spread evenly: 116.
    expect(inMinute(admitted(slidingWindow({ limit: LIMIT, windowMs: WINDOW_MS }), burst))).toBe(
      116,
    )
    for (const k of [2, 6, 60]) expect(inMinute(admitted(counters(k), burst)), `k = ${k}`).toBe(100)
  })

  it('never admit more in any window than the limit plus what one sub-window span admitted', () => {
    fc.assert(
      fc.property(trafficArb, fc.constantFrom(2, 3, 6, 10, 60), (traffic, k) => {
        const times = admitted(counters(k), traffic)
        expect(densest(times, WINDOW_MS)).toBeLessThanOrEqual(LIMIT + densest(times, WINDOW_MS / k))
      }),
      { numRuns: 200 },
    )
  })

  it('stray less from the sliding log as k grows: 2, then 6, then 60 (mean over random traffic)', () => {
    const traffic = fc.sample(trafficArb, { seed: 24, numRuns: 40 })
    const excess = (algorithm: Algorithm) => {
      let total = 0
      for (const arrivals of traffic) {
        const exact = admitted(slidingLog({ limit: LIMIT, windowMs: WINDOW_MS }), arrivals).length
        total += admitted(algorithm, arrivals).length - exact
      }
      return total / traffic.length
    }
    const [two, six, sixty] = [2, 6, 60].map((k) => excess(counters(k)))
    expect(two).toBeGreaterThan(six!)
    expect(six).toBeGreaterThan(sixty!)
    expect(sixty).toBeGreaterThanOrEqual(0)
  })
})
