// Long saturation runs: integer arithmetic must admit exactly the promised count, every time.
import { describe, expect, it } from 'vitest'
import { type Algorithm, gcra, leakyBucket, type RateParams, tokenBucket } from './index.js'

/** A client that never pauses: one request every `stepMs` from 0 to `durationMs` inclusive. */
function saturate(algorithm: Algorithm, durationMs: number, stepMs: number): number {
  const state = new Float64Array(algorithm.stateSize)
  algorithm.init(state, 0, 0)
  let admitted = 0
  for (let now = 0; now <= durationMs; now += stepMs) {
    if (algorithm.decide(state, 0, 1, now, true).allowed) admitted++
  }
  return admitted
}

const DAY_MS = 86_400_000
const makers: Array<[string, (p: RateParams) => Algorithm]> = [
  ['token bucket', tokenBucket],
  ['GCRA', gcra],
  ['leaky bucket', leakyBucket],
]

describe('24 simulated hours at "100 per 60 s, burst 100"', () => {
  it.each(makers)('%s admits exactly 100 + 100 × 1440', (_name, make) => {
    // A token becomes due every 600 ms, a multiple of the 10 ms step: no arrival misses one.
    expect(saturate(make({ rate: 100, periodMs: 60_000, burst: 100 }), DAY_MS, 10)).toBe(
      100 + 100 * 1440,
    )
  })
})

describe('an hour at a rate with no whole ms interval, "3 per 7 s, burst 2"', () => {
  it.each(makers)('%s admits exactly 2 + floor(3 × 3600 / 7)', (_name, make) => {
    expect(saturate(make({ rate: 3, periodMs: 7000, burst: 2 }), 3_600_000, 1)).toBe(
      2 + Math.floor((3 * 3_600_000) / 7000),
    )
  })
})
