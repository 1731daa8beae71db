// The token bucket and the parameter and input checks against themselves as they were before
// their code was shortened (old-algorithms/*.test-copy.ts): the same decisions, the same states,
// the same errors (code, field and text), from any state a bucket can hold, at any time.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { ceilDiv, floorDiv, greatestCommonDivisor, MAX_TIME_MS } from './integer.js'
import * as old from './old-algorithms/integer.test-copy.js'
import { tokenBucket as oldTokenBucket } from './old-algorithms/token-bucket.test-copy.js'
import { scaleRate } from './params.js'
import { tokenBucket } from './token-bucket.js'
import type { Algorithm } from './types.js'

/** What a call gives: its result, or the error it throws (code, field and message). */
export function outcome(call: () => unknown): unknown {
  try {
    return { returned: call() }
  } catch (error) {
    const { name, code, field, message } = error as Record<string, unknown>
    return { threw: { name, code, field, message } }
  }
}

const START = 1_800_000_000_000
const timeArb = fc.oneof(
  fc.integer({ min: START - 200_000, max: START + 200_000 }),
  fc.integer({ min: START - 10 * 86_400_000, max: START + 10 * 86_400_000 }),
  fc.integer({ min: 0, max: MAX_TIME_MS }),
)

const paramsArb = fc.record({
  rate: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 999_999 })),
  periodMs: fc.constantFrom(1, 7, 1000, 60_000, 86_400_000),
  burst: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 100_000 })),
})

type Call =
  | { kind: 'decide'; cost: number; now: number; commit: boolean }
  | { kind: 'refund'; cost: number; chargedAt: number; now: number }
  | { kind: 'settle'; charged: number; actual: number; chargedAt: number; now: number }

const callsArb = (burst: number): fc.Arbitrary<Call[]> => {
  const cost = fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: burst + 1 }))
  const big = fc.oneof(cost, fc.integer({ min: 0, max: 5 * burst + 3 }))
  return fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('decide' as const), cost, now: timeArb, commit: fc.boolean() }),
      fc.record({
        kind: fc.constant('refund' as const),
        cost: big,
        chargedAt: timeArb,
        now: timeArb,
      }),
      fc.record({
        kind: fc.constant('settle' as const),
        charged: big,
        actual: big,
        chargedAt: timeArb,
        now: timeArb,
      }),
    ),
    { minLength: 1, maxLength: 40 },
  )
}

/** An algorithm's figures (name, limit, policy, params, state size...) without its methods. */
function withoutMethods(algorithm: Algorithm): object {
  return { ...algorithm, init: 0, decide: 0, refund: 0, settle: 0, freshAt: 0 }
}

function run(algorithm: Algorithm, slots: number[], call: Call): Decision | undefined {
  if (call.kind === 'decide') return algorithm.decide(slots, 1, call.cost, call.now, call.commit)
  if (call.kind === 'refund') algorithm.refund(slots, 1, call.cost, call.chargedAt, call.now)
  else algorithm.settle!(slots, 1, call.charged, call.actual, call.chargedAt, call.now)
  return undefined
}

describe('tokenBucket, against its code before it was shortened', () => {
  it('decides, refunds and settles to the same decisions, states and errors', () => {
    fc.assert(
      fc.property(
        paramsArb.chain((params) => {
          const { capacity } = scaleRate(params)
          return fc.tuple(
            fc.constant(params),
            fc.integer({ min: -capacity, max: capacity }),
            timeArb,
            callsArb(params.burst),
          )
        }),
        ([params, level, last, calls]) => {
          const now = tokenBucket(params)
          const before = oldTokenBucket(params)
          expect(withoutMethods(now)).toEqual(withoutMethods(before))
          const a = [7, level, last, 7]
          const b = [7, level, last, 7]
          for (const call of calls) {
            expect(outcome(() => run(now, a, call))).toEqual(outcome(() => run(before, b, call)))
            expect(a).toEqual(b)
            expect(now.freshAt(a, 1)).toBe(before.freshAt(b, 1))
          }
        },
      ),
      { numRuns: 4000 },
    )
  })
})

describe('the integer helpers, against their code before it was shortened', () => {
  const wide = fc.oneof(
    fc.integer({ min: -1000, max: 1000 }),
    fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    fc.integer({ min: Number.MAX_SAFE_INTEGER - 10_000, max: Number.MAX_SAFE_INTEGER }),
  )
  const divisor = fc.oneof(
    fc.integer({ min: 1, max: 100 }),
    fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  )

  // Near a multiple of a large divisor, where `a / b` rounds onto the wrong whole number.
  const nearMultiple = fc
    .tuple(fc.integer({ min: 2 ** 30, max: 2 ** 31 }), fc.integer({ min: 2 ** 22, max: 2 ** 23 }))
    .chain(([b, k]) =>
      fc.tuple(
        fc.constant(b),
        fc.integer({ min: -2, max: 2 }).map((r) => b * k + r),
      ),
    )
    .filter(([, a]) => Number.isSafeInteger(a))

  it('floorDiv and ceilDiv give the same quotients near a multiple', () => {
    fc.assert(
      fc.property(nearMultiple, ([b, a]) => {
        expect(floorDiv(a, b)).toBe(old.floorDiv(a, b))
        expect(ceilDiv(a, b)).toBe(old.ceilDiv(a, b))
      }),
      { numRuns: 20_000 },
    )
  })

  it('floorDiv and ceilDiv give the same quotients', () => {
    fc.assert(
      fc.property(wide, divisor, (a, b) => {
        expect(floorDiv(a, b)).toBe(old.floorDiv(a, b))
        expect(ceilDiv(a, b)).toBe(old.ceilDiv(a, b))
        expect(floorDiv(-a, b)).toBe(old.floorDiv(-a, b))
      }),
      { numRuns: 20_000 },
    )
  })

  it('greatestCommonDivisor gives the same divisors', () => {
    fc.assert(
      fc.property(fc.nat(), divisor, wide, (a, b, c) => {
        expect(greatestCommonDivisor(a, b)).toBe(old.greatestCommonDivisor(a, b))
        expect(greatestCommonDivisor(b, a)).toBe(old.greatestCommonDivisor(b, a))
        expect(greatestCommonDivisor(Math.abs(c), b)).toBe(
          old.greatestCommonDivisor(Math.abs(c), b),
        )
      }),
      { numRuns: 20_000 },
    )
    // Consecutive Fibonacci numbers, the longest chain of remainders below 2^53.
    expect(greatestCommonDivisor(5_527_939_700_884_757, 8_944_394_323_791_464)).toBe(1)
  })
})
