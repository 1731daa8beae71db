// The 8-byte forms of the token bucket, the leaky bucket and the fixed window (the memory store's
// 16-byte slots) against their own unpacked arithmetic: on any trace, at any time up to
// MAX_TIME_MS, with clocks that step both ways, the same decisions and the same state.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { packedForm } from '../store/packed-forms.js'
import {
  type Algorithm,
  fixedWindow,
  leakyBucket,
  MAX_TIME_MS,
  type RateParams,
  tokenBucket,
} from './index.js'
import { PACKED_CAPACITY_LIMIT } from './packed-state.js'
import { scaleRate } from './params.js'

type Op = { readonly kind: 'take' | 'dry' | 'refund'; readonly step: number; readonly cost: number }

/** Rate rules of every capacity the layout takes, many of them close to its limit. */
const packableRate = fc
  .oneof(
    fc.record({
      rate: fc.integer({ min: 1, max: 1000 }),
      periodMs: fc.integer({ min: 1, max: 120_000 }),
      burst: fc.integer({ min: 1, max: 200 }),
    }),
    fc.record({
      rate: fc.integer({ min: 1, max: 7 }),
      periodMs: fc.integer({ min: 100_000, max: PACKED_CAPACITY_LIMIT - 1 }),
      burst: fc.integer({ min: 1, max: 20 }),
    }),
  )
  .filter((params: RateParams) => scaleRate(params).capacity < PACKED_CAPACITY_LIMIT)

type Case = { readonly algorithm: Algorithm; readonly spanMs: number }

const rateCases = (factory: (params: RateParams) => Algorithm) =>
  packableRate.map((params): Case => {
    const { capacity, unitsPerMs } = scaleRate(params)
    return { algorithm: factory(params), spanMs: Math.ceil(capacity / unitsPerMs) }
  })

const windowCases = fc.oneof(
  fc
    .record({
      limit: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.constant(PACKED_CAPACITY_LIMIT - 1)),
      windowMs: fc.oneof(
        fc.integer({ min: 1, max: 120_000 }),
        fc.integer({ min: 1, max: MAX_TIME_MS }),
      ),
    })
    .map((params): Case => ({ algorithm: fixedWindow(params), spanMs: params.windowMs })),
  fc
    .record({
      limit: fc.integer({ min: 1, max: 60 }),
      calendar: fc.constantFrom('day', 'week', 'month', 'year' as const),
      timeZone: fc.constantFrom('UTC', 'Europe/Paris', 'America/St_Johns', 'Pacific/Chatham'),
    })
    .map((params): Case => ({ algorithm: fixedWindow(params), spanMs: 366 * 86_400_000 })),
)

const trace = ({ algorithm, spanMs }: Case) =>
  fc.tuple(
    fc.constant(algorithm),
    fc.oneof(
      fc.integer({ min: 0, max: MAX_TIME_MS }),
      fc.integer({ min: Math.max(0, MAX_TIME_MS - 3 * spanMs), max: MAX_TIME_MS }),
      fc.constantFrom(0, 2 ** 32 - 1, 2 ** 32, MAX_TIME_MS),
    ),
    fc.array(
      fc.record({
        kind: fc.constantFrom('take', 'take', 'dry', 'refund'),
        step: fc.oneof(
          fc.integer({ min: 0, max: 3 }),
          fc.integer({ min: -spanMs * 3, max: spanMs * 3 }),
          fc.integer({ min: -MAX_TIME_MS, max: MAX_TIME_MS }),
        ),
        cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: algorithm.limit })),
      }) as fc.Arbitrary<Op>,
      { minLength: 1, maxLength: 80 },
    ),
  )

function samePackedAndUnpacked(algorithm: Algorithm, start: number, ops: readonly Op[]): void {
  const packed = packedForm(algorithm)!
  expect(packed).toBeDefined()
  // Two slots' worth of words, the state at word 2, as a table lays it out.
  const words = new Uint32Array(4)
  words[0] = 0xdeadbeef
  words[1] = 0xffffffff
  const state = [0, 0]
  algorithm.init(state, 0, start)
  packed.init(words, 2, start)
  let now = start
  for (const { kind, step, cost } of ops) {
    // A refund's charge time: the previous request's, which may lie in another window.
    const chargedAt = now
    now = Math.min(MAX_TIME_MS, Math.max(0, now + step))
    if (kind === 'refund') {
      algorithm.refund(state, 0, cost, chargedAt, now)
      packed.refund(words, 2, cost, chargedAt, now)
    } else {
      const commit = kind === 'take'
      expect(packed.decide(words, 2, cost, now, commit)).toEqual(
        algorithm.decide(state, 0, cost, now, commit),
      )
    }
    const unpacked = [-1, -1]
    packed.unpack(words, 2, unpacked, 0)
    expect(unpacked).toEqual(state)
    expect(packed.freshAt(words, 2)).toBe(algorithm.freshAt(state, 0))
    // The words before the state (a fingerprint) are never touched.
    expect([words[0], words[1]]).toEqual([0xdeadbeef, 0xffffffff])
  }
  const copy = new Uint32Array(4)
  packed.pack(state, 0, copy, 2)
  expect([copy[2], copy[3]]).toEqual([words[2], words[3]])
}

describe.each([
  ['token bucket', rateCases(tokenBucket), 400],
  ['leaky bucket', rateCases(leakyBucket), 400],
  ['fixed window', windowCases, 300],
])('the %s in 8 bytes', (_name, cases, numRuns) => {
  it('decides, refunds and ages exactly as its two doubles, at any time, clocks stepping', () => {
    fc.assert(
      fc.property(cases.chain(trace), ([algorithm, start, ops]) =>
        samePackedAndUnpacked(algorithm, start, ops),
      ),
      { numRuns },
    )
  })
})

describe('the 8-byte form', () => {
  it('is offered exactly when the capacity or limit fits in 21 bits', () => {
    for (const factory of [tokenBucket, leakyBucket]) {
      // 1 per (2^21 − 1) ms: one token is 2^21 − 1 units, the largest capacity that fits.
      const largest = { rate: 1, periodMs: PACKED_CAPACITY_LIMIT - 1, burst: 1 }
      expect(factory(largest).packed).toBeDefined()
      expect(factory({ ...largest, periodMs: PACKED_CAPACITY_LIMIT }).packed).toBeUndefined()
      expect(factory({ rate: 100, periodMs: 60_000, burst: 3_495 }).packed).toBeDefined()
      expect(factory({ rate: 100, periodMs: 60_000, burst: 3_496 }).packed).toBeUndefined()
    }
    const window = { limit: PACKED_CAPACITY_LIMIT - 1, windowMs: 1000 }
    expect(fixedWindow(window).packed).toBeDefined()
    expect(fixedWindow({ ...window, limit: PACKED_CAPACITY_LIMIT }).packed).toBeUndefined()
    expect(
      fixedWindow({ limit: 10, calendar: 'month', timeZone: 'Asia/Tokyo' }).packed,
    ).toBeDefined()
  })
})
