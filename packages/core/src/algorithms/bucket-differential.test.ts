// The token and leaky buckets' refunds and settles as one adjustment each, and the token bucket's
// inspections deciding on the state itself (writing nothing) instead of on a copy, against the
// implementations they replaced (kept below as they were): the same decisions and the same
// states, from any state a bucket can hold, at any time, a clock that stepped back included.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Decision } from '../decision.js'
import { inspectionCopy } from './inspection.js'
import { ceilDiv, floorDiv, MAX_TIME_MS } from './integer.js'
import { leakyBucket } from './leaky-bucket.js'
import { PACKED_CAPACITY_LIMIT } from './packed-state.js'
import {
  costTooHigh,
  RATE_PARAMS,
  type RateParams,
  refuseUnknownParams,
  scaleRate,
} from './params.js'
import { tokenBucket } from './token-bucket.js'
import type { Algorithm, StateSlots } from './types.js'

const paramsArb = fc.record({
  rate: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 999_999 })),
  periodMs: fc.constantFrom(1, 7, 1000, 60_000, 86_400_000),
  burst: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 100_000 })),
})

const START = 1_800_000_000_000
const timeArb = fc.oneof(
  fc.integer({ min: START - 200_000, max: START + 200_000 }),
  fc.integer({ min: START - 10 * 86_400_000, max: START + 10 * 86_400_000 }),
  fc.integer({ min: 0, max: MAX_TIME_MS }),
)

type Call =
  | { kind: 'decide'; cost: number; now: number; commit: boolean }
  | { kind: 'refund'; cost: number; chargedAt: number; now: number }
  | { kind: 'settle'; charged: number; actual: number; chargedAt: number; now: number }

const callsArb = (burst: number): fc.Arbitrary<Call[]> => {
  const cost = fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: burst }))
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

/** Runs `call` on `slots` (at offset 1, to check offsets are honoured); the decision, if any. */
function run(algorithm: Algorithm, slots: number[], call: Call): Decision | undefined {
  if (call.kind === 'decide') return algorithm.decide(slots, 1, call.cost, call.now, call.commit)
  if (call.kind === 'refund') algorithm.refund(slots, 1, call.cost, call.chargedAt, call.now)
  else algorithm.settle!(slots, 1, call.charged, call.actual, call.chargedAt, call.now)
  return undefined
}

/** Each bucket, its replaced implementation, and the range of its first number. */
const BUCKETS = [
  {
    name: 'token bucket',
    make: tokenBucket,
    old: oldTokenBucket,
    // From one burst in debt (after a settle) to full.
    first: (capacity: number) => fc.integer({ min: -capacity, max: capacity }),
  },
  {
    name: 'leaky bucket',
    make: leakyBucket,
    old: oldLeakyBucket,
    // From empty to one burst above the brim (after a settle).
    first: (capacity: number) => fc.integer({ min: 0, max: 2 * capacity }),
  },
]

describe.each(BUCKETS)('$name, against the implementation it replaced', ({ make, old, first }) => {
  it('decides, refunds and settles to the same decisions and states', () => {
    fc.assert(
      fc.property(
        paramsArb.chain((params) => fc.tuple(fc.constant(params), timeArb, callsArb(params.burst))),
        ([params, start, calls]) => {
          const now = make(params)
          const before = old(params)
          const a = [7, 0, 0, 7]
          const b = [7, 0, 0, 7]
          now.init(a, 1, start)
          before.init(b, 1, start)
          for (const call of calls) {
            expect(run(now, a, call)).toEqual(run(before, b, call))
            expect(a).toEqual(b)
          }
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('from any state a settle can leave, last written at any time', () => {
    fc.assert(
      fc.property(
        paramsArb.chain((params) =>
          fc.tuple(
            fc.constant(params),
            first(scaleRate(params).capacity),
            timeArb,
            callsArb(params.burst),
          ),
        ),
        ([params, level, last, calls]) => {
          const now = make(params)
          const before = old(params)
          const a = [7, level, last, 7]
          const b = [7, level, last, 7]
          for (const call of calls) {
            expect(run(now, a, call)).toEqual(run(before, b, call))
            expect(a).toEqual(b)
          }
        },
      ),
      { numRuns: 3000 },
    )
  })
})

function oldTokenBucket(params: RateParams): Algorithm {
  refuseUnknownParams('tokenBucket', params, RATE_PARAMS)
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaleRate(params)
  const fillMs = ceilDiv(capacity, unitsPerMs)
  // Beyond this many ms of idling the bucket is full whatever its level, down to the one burst
  // of debt a settle may leave (`settle`); capping the elapsed time first keeps
  // `elapsed × unitsPerMs` far from 2^53.
  const fullMs = ceilDiv(2 * capacity, unitsPerMs)

  function levelAt(slots: StateSlots, offset: number, at: number): number {
    const elapsed = at - slots[offset + 1]!
    if (elapsed >= fullMs) return capacity
    return Math.min(capacity, slots[offset]! + elapsed * unitsPerMs)
  }

  /**
   * A last refill more than a fill time ahead of `now` cannot happen on a steady clock: the
   * clock stepped back. Holding the key there would lock it out for the whole step, so it is
   * moved to `now` with the tokens it holds (elapsed clamped to 0; nothing refills for the
   * step). A smaller step is held, so clocks that disagree by less than a fill time never
   * refill twice.
   */
  function rebase(slots: StateSlots, offset: number, now: number): void {
    if (slots[offset + 1]! - now > fillMs) slots[offset + 1] = now
  }

  function refund(
    slots: StateSlots,
    offset: number,
    cost: number,
    _chargedAt: number,
    now: number,
  ): void {
    rebase(slots, offset, now)
    // Refilling is min(capacity, level + gain), so adding the cost back and capping again gives
    // exactly the level the key would have had without the charge.
    const at = Math.max(now, slots[offset + 1]!)
    slots[offset] = Math.min(capacity, levelAt(slots, offset, at) + cost * unitsPerToken)
    slots[offset + 1] = at
  }

  return {
    name: 'token_bucket',
    limit: burst,
    policy: { quota: rate, windowMs: periodMs },
    params: { kind: 'rate', unitsPerMs, unitsPerToken, capacity, burst },
    stateSize: 2,
    // The memory store keeps a state that fits in two uint32 words (store/packed-forms.ts).
    packed: capacity < PACKED_CAPACITY_LIMIT || undefined,
    init(slots, offset, now) {
      slots[offset] = capacity
      slots[offset + 1] = now
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > burst) throw costTooHigh(cost, burst)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 2)
        offset = 0
      }
      // As `rebase` and `levelAt`, written out: this runs on every request.
      let last = slots[offset + 1]!
      if (last - now > fillMs) {
        last = now
        slots[offset + 1] = now
      }
      // A clock that stepped back (by up to a fill time) is held at the last refill: no tokens
      // out of thin air.
      const at = Math.max(now, last)
      const skew = at - now
      const elapsed = at - last
      const level =
        elapsed >= fullMs ? capacity : Math.min(capacity, slots[offset]! + elapsed * unitsPerMs)
      const need = cost * unitsPerToken
      // Cost 0 only inspects: it passes even on a bucket in debt (below empty, after a settle).
      if (level < need && cost > 0) {
        return {
          allowed: false,
          remaining: Math.max(0, floorDiv(level, unitsPerToken)),
          limit: burst,
          resetAfterMs: skew + ceilDiv(capacity - level, unitsPerMs),
          retryAfterMs: skew + ceilDiv(need - level, unitsPerMs),
        }
      }
      const left = level - need
      if (commit) {
        slots[offset] = left
        slots[offset + 1] = at
      }
      return {
        allowed: true,
        remaining: Math.max(0, floorDiv(left, unitsPerToken)),
        limit: burst,
        resetAfterMs: left === capacity ? 0 : skew + ceilDiv(capacity - left, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund,
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual < charged) return refund(slots, offset, charged - actual, chargedAt, now)
      if (actual === charged) return
      rebase(slots, offset, now)
      // Charged at the state's own time, not after refilling it to `now`: with no other charge
      // since the reservation, that is the level charging `actual` then would have left, and the
      // refill since is counted from it. A state last written before the reservation (one of
      // cost 0 writes nothing) is first refilled to it. At most one burst below empty (so that
      // `fullMs` holds); two bursts and a token more of extra always reach that floor.
      const base = Math.min(chargedAt, now)
      if (slots[offset + 1]! < base) {
        slots[offset] = levelAt(slots, offset, base)
        slots[offset + 1] = base
      }
      const extra = Math.min(actual - charged, 2 * burst + 1) * unitsPerToken
      slots[offset] = Math.max(-capacity, slots[offset]! - extra)
    },
    freshAt(slots, offset) {
      return slots[offset + 1]! + ceilDiv(capacity - slots[offset]!, unitsPerMs)
    },
  }
}

function oldLeakyBucket(params: RateParams): Algorithm {
  refuseUnknownParams('leakyBucket', params, RATE_PARAMS)
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaleRate(params)
  const drainMs = ceilDiv(capacity, unitsPerMs)
  // Beyond this many ms the bucket is empty whatever it holds, up to the one burst of debt
  // (water above the brim) a settle may leave.
  const emptyMs = ceilDiv(2 * capacity, unitsPerMs)

  function waterAt(slots: StateSlots, offset: number, at: number): number {
    const elapsed = at - slots[offset + 1]!
    if (elapsed >= emptyMs) return 0
    return Math.max(0, slots[offset]! - elapsed * unitsPerMs)
  }

  /**
   * A last leak more than a drain time ahead of `now`: the clock stepped back. The key is moved
   * to `now` with the water it holds, as the token bucket does (see there).
   */
  function rebase(slots: StateSlots, offset: number, now: number): void {
    if (slots[offset + 1]! - now > drainMs) slots[offset + 1] = now
  }

  function refund(
    slots: StateSlots,
    offset: number,
    cost: number,
    _chargedAt: number,
    now: number,
  ): void {
    rebase(slots, offset, now)
    const at = Math.max(now, slots[offset + 1]!)
    slots[offset] = Math.max(0, waterAt(slots, offset, at) - cost * unitsPerToken)
    slots[offset + 1] = at
  }

  return {
    name: 'leaky_bucket',
    limit: burst,
    policy: { quota: rate, windowMs: periodMs },
    params: { kind: 'rate', unitsPerMs, unitsPerToken, capacity, burst },
    stateSize: 2,
    // The memory store keeps a state that fits in two uint32 words (store/packed-forms.ts).
    packed: capacity < PACKED_CAPACITY_LIMIT || undefined,
    init(slots, offset, now) {
      slots[offset] = 0
      slots[offset + 1] = now
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > burst) throw costTooHigh(cost, burst)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 2)
        offset = 0
      }
      rebase(slots, offset, now)
      const at = Math.max(now, slots[offset + 1]!)
      const skew = at - now
      const water = waterAt(slots, offset, at)
      const poured = water + cost * unitsPerToken
      // Cost 0 only inspects: it passes even when a lowered burst leaves the bucket overfull.
      if (cost > 0 && poured > capacity) {
        return {
          allowed: false,
          // A burst lowered while the bucket still holds more water leaves it overfull.
          remaining: Math.max(0, floorDiv(capacity - water, unitsPerToken)),
          limit: burst,
          resetAfterMs: skew + ceilDiv(water, unitsPerMs),
          retryAfterMs: skew + ceilDiv(poured - capacity, unitsPerMs),
        }
      }
      if (commit) {
        slots[offset] = poured
        slots[offset + 1] = at
      }
      return {
        allowed: true,
        remaining: Math.max(0, floorDiv(capacity - poured, unitsPerToken)),
        limit: burst,
        resetAfterMs: poured === 0 ? 0 : skew + ceilDiv(poured, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund,
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual < charged) return refund(slots, offset, charged - actual, chargedAt, now)
      if (actual === charged) return
      rebase(slots, offset, now)
      // Poured at the state's own time, as the token bucket charges it (see there), up to one
      // burst above the brim.
      const base = Math.min(chargedAt, now)
      if (slots[offset + 1]! < base) {
        slots[offset] = waterAt(slots, offset, base)
        slots[offset + 1] = base
      }
      const extra = Math.min(actual - charged, 2 * burst + 1) * unitsPerToken
      slots[offset] = Math.min(2 * capacity, slots[offset]! + extra)
    },
    freshAt(slots, offset) {
      return slots[offset + 1]! + ceilDiv(slots[offset]!, unitsPerMs)
    },
  }
}
