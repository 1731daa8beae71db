// The token bucket and the parameter and input checks against themselves as they were before
// their code was shortened (old-algorithms/*.test-copy.ts): the same decisions, the same states,
// the same errors (code, field and text), from any state a bucket can hold, at any time.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { MAX_TIME_MS } from './integer.js'
import { tokenBucket as oldTokenBucket } from './old-algorithms/token-bucket.test-copy.js'
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
          const capacity = oldTokenBucket(params).params.capacity
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
