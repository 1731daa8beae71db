import type { Decision } from '../decision.js'
import { ceilDiv, floorDiv } from './integer.js'
import { PACKED_CAPACITY_LIMIT } from './packed-state.js'
import {
  costTooHigh,
  RATE_PARAMS,
  type RateParams,
  refuseUnknownParams,
  scaleRate,
} from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/**
 * Token bucket: a bucket of `burst` tokens refilled at `rate` per `periodMs`; a request spends
 * its cost. State: [level in units, time of the last refill in ms]. Refill is computed lazily,
 * in integer units (see `ScaledRate`), so "100 per 60 s" stays exact for ever.
 *
 * **Pro:** bounded bursts, then a steady rate; exact retry times. **Con:** two parameters to tune.
 * @example tokenBucket({ rate: 10, burst: 20 }) // 10 per second, bursts of 20
 */
export function tokenBucket(params: RateParams): Algorithm {
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

  /**
   * Gives back (`units` > 0) or takes (`units` < 0) units on the state refilled to `at` (if it
   * was last refilled before), kept between one burst in debt and full. Refilling is
   * min(capacity, level + gain), so adding a refund and capping again gives exactly the level the
   * key would have had without the charge.
   */
  function adjust(slots: StateSlots, offset: number, now: number, at: number, units: number) {
    rebase(slots, offset, now)
    if (slots[offset + 1]! < at) {
      slots[offset] = levelAt(slots, offset, at)
      slots[offset + 1] = at
    }
    slots[offset] = Math.max(-capacity, Math.min(capacity, slots[offset]! + units))
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
      // As `rebase` and `levelAt`, written out: this runs on every request. An inspection (cost
      // 0) writes nothing, not even this move (see inspection.ts): it only reads.
      let last = slots[offset + 1]!
      if (last - now > fillMs) {
        last = now
        if (cost > 0) slots[offset + 1] = now
      }
      // A clock that stepped back (by up to a fill time) is held at the last refill: no tokens
      // out of thin air.
      const at = Math.max(now, last)
      const skew = at - now
      const elapsed = at - last
      const level =
        elapsed >= fullMs ? capacity : Math.min(capacity, slots[offset]! + elapsed * unitsPerMs)
      let left = level - cost * unitsPerToken
      let retryAfterMs: number | undefined
      // Cost 0 only inspects: it passes even on a bucket in debt (below empty, after a settle).
      // A denied request takes nothing: what is left is the level, below full.
      if (left < 0 && cost > 0) {
        retryAfterMs = skew + ceilDiv(-left, unitsPerMs)
        left = level
      } else if (commit && cost > 0) {
        slots[offset] = left
        slots[offset + 1] = at
      }
      return {
        allowed: retryAfterMs === undefined,
        remaining: Math.max(0, floorDiv(left, unitsPerToken)),
        limit: burst,
        resetAfterMs: left === capacity ? 0 : skew + ceilDiv(capacity - left, unitsPerMs),
        retryAfterMs,
      }
    },
    refund(slots, offset, cost, _chargedAt, now) {
      adjust(slots, offset, now, now, cost * unitsPerToken)
    },
    settle(slots, offset, charged, actual, chargedAt, now) {
      // Less than charged: refunded as now. More: charged at the state's own time, not after
      // refilling it to `now`: with no other charge since the reservation, that is the level
      // charging `actual` then would have left, and the refill since is counted from it. A state
      // last written before the reservation (one of cost 0 writes nothing) is first refilled to
      // it. At most one burst below empty (so that `fullMs` holds); two bursts and a token more
      // of extra always reach that floor.
      if (actual !== charged) {
        const at = actual < charged ? now : Math.min(chargedAt, now)
        adjust(slots, offset, now, at, -Math.min(actual - charged, 2 * burst + 1) * unitsPerToken)
      }
    },
    freshAt(slots, offset) {
      return slots[offset + 1]! + ceilDiv(capacity - slots[offset]!, unitsPerMs)
    },
  }
}
