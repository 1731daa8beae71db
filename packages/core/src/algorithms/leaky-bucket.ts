import type { Decision } from '../decision.js'
import { inspectionCopy } from './inspection.js'
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
 * Leaky bucket as a meter (NGINX `limit_req ... nodelay`): each request pours its cost into a
 * bucket of size `burst` that leaks at `rate` per `periodMs`; a request that would overflow it
 * is denied. State: [water level in units, time of the last leak in ms]. It makes the same
 * decisions as the token bucket (the water is the tokens already spent), counted upside down.
 *
 * **Pro:** the familiar NGINX model. **Con:** rejects rather than queues; shaping needs a queue.
 * @example leakyBucket({ rate: 10, burst: 20 })
 */
export function leakyBucket(params: RateParams): Algorithm {
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

  /**
   * Pours (`units` > 0) or takes out (`units` < 0) units on the state leaked to `at` (if it last
   * leaked before), kept between empty and one burst above the brim, as the token bucket adjusts
   * (see there).
   */
  function adjust(slots: StateSlots, offset: number, now: number, at: number, units: number) {
    rebase(slots, offset, now)
    if (slots[offset + 1]! < at) {
      slots[offset] = waterAt(slots, offset, at)
      slots[offset + 1] = at
    }
    slots[offset] = Math.max(0, Math.min(2 * capacity, slots[offset]! + units))
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
    refund(slots, offset, cost, _chargedAt, now) {
      adjust(slots, offset, now, now, -cost * unitsPerToken)
    },
    settle(slots, offset, charged, actual, chargedAt, now) {
      // Less than charged: refunded as now. More: poured at the state's own time, as the token
      // bucket charges it (see there), up to one burst above the brim.
      if (actual !== charged) {
        const at = actual < charged ? now : Math.min(chargedAt, now)
        adjust(slots, offset, now, at, Math.min(actual - charged, 2 * burst + 1) * unitsPerToken)
      }
    },
    freshAt(slots, offset) {
      return slots[offset + 1]! + ceilDiv(slots[offset]!, unitsPerMs)
    },
  }
}
