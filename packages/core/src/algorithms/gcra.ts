import type { Decision } from '../decision.js'
import { splitGcra } from './gcra-split.js'
import { inspectionCopy } from './inspection.js'
import { ceilDiv, floorDiv, MAX_TIME_MS } from './integer.js'
import {
  costTooHigh,
  RATE_PARAMS,
  type RateParams,
  refuseUnknownParams,
  type ScaledRate,
  scaleRate,
} from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/**
 * GCRA, the generic cell rate algorithm: token-bucket decisions kept as one moment per key, the
 * theoretical arrival time (TAT) of the next request. Time is counted in ticks of
 * 1/`unitsPerMs` ms so that the emission interval (`unitsPerToken` ticks) is a whole number even
 * for rates such as 3 per second. A request is allowed while TAT − now stays within the burst.
 *
 * The TAT is one number, ticks since the epoch, when every such number stays below 2^53 (rates
 * that reduce to at most about 2,000 units per ms: 10 per second, 1,000 per minute); finer rates
 * (2,053 per second, 10,000 per second) keep two, whole ms and the ticks beyond them
 * (gcra-split.ts), so GCRA takes every rate the token bucket takes.
 *
 * **Pro:** one timestamp of state; same decisions as `tokenBucket`. **Con:** needs a clock every
 * checker agrees on (in Redis, the server's).
 * @example gcra({ rate: 10, burst: 20 })
 */
export function gcra(params: RateParams): Algorithm {
  refuseUnknownParams('gcra', params, RATE_PARAMS)
  const rate = scaleRate(params)
  return fitsInTicks(rate) ? ticksGcra(rate) : splitGcra(rate)
}

/**
 * Whether every TAT, in ticks since the epoch, stays a whole number below 2^53: up to two fill
 * times and a few ticks ahead of the latest time the algorithms take.
 */
function fitsInTicks({ unitsPerMs, capacity }: ScaledRate): boolean {
  return (MAX_TIME_MS + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs <= Number.MAX_SAFE_INTEGER
}

function ticksGcra(scaled: ScaledRate): Algorithm {
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaled
  // More than two fill times ahead (whole ms) cannot happen on a steady clock (one at most), nor
  // after a step back the key is held for (another fill time, so that clocks that disagree by
  // less never refill twice): the clock stepped back further.
  const holdTicks = (2 * ceilDiv(capacity, unitsPerMs) + 1) * unitsPerMs

  /** Ticks the TAT lies ahead of `now` (0 when passed), after moving a state held too long. */
  function aheadOf(slots: StateSlots, offset: number, now: number): number {
    const ahead = slots[offset]! - now * unitsPerMs
    if (ahead < holdTicks) return Math.max(0, ahead)
    // Moved to a drained bucket at `now` rather than locked out for the whole step; kept even
    // on a denial.
    slots[offset] = now * unitsPerMs + capacity
    return capacity
  }

  function refund(
    slots: StateSlots,
    offset: number,
    cost: number,
    _chargedAt: number,
    now: number,
  ): void {
    const tatAhead = aheadOf(slots, offset, now)
    slots[offset] = now * unitsPerMs + Math.max(0, tatAhead - cost * unitsPerToken)
  }

  return {
    name: 'gcra',
    limit: burst,
    policy: { quota: rate, windowMs: periodMs },
    params: { kind: 'rate', unitsPerMs, unitsPerToken, capacity, burst },
    stateSize: 1,
    init(slots, offset, now) {
      slots[offset] = now * unitsPerMs
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > burst) throw costTooHigh(cost, burst)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 1)
        offset = 0
      }
      const tatAhead = aheadOf(slots, offset, now)
      const need = cost * unitsPerToken
      // Compared, never summed: a TAT held up to two buckets ahead plus a cost could pass 2^53.
      // Cost 0 only inspects: it passes even when the TAT looks more than a bucket ahead.
      if (tatAhead > capacity - need) {
        if (cost > 0) {
          return {
            allowed: false,
            // None when the TAT is further ahead than a full bucket: a clock that stepped back,
            // or a burst lowered while keys still hold state.
            remaining: tatAhead > capacity ? 0 : floorDiv(capacity - tatAhead, unitsPerToken),
            limit: burst,
            resetAfterMs: ceilDiv(tatAhead, unitsPerMs),
            retryAfterMs: ceilDiv(tatAhead - (capacity - need), unitsPerMs),
          }
        }
        return {
          allowed: true,
          remaining: 0,
          limit: burst,
          resetAfterMs: ceilDiv(tatAhead, unitsPerMs),
          retryAfterMs: undefined,
        }
      }
      const after = tatAhead + need
      if (commit) slots[offset] = now * unitsPerMs + after
      return {
        allowed: true,
        remaining: floorDiv(capacity - after, unitsPerToken),
        limit: burst,
        resetAfterMs: ceilDiv(after, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund,
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual < charged) return refund(slots, offset, charged - actual, chargedAt, now)
      if (actual === charged) return
      aheadOf(slots, offset, now)
      // The extra moves the TAT itself, not the TAT as of `now`: with no other charge since the
      // reservation, that is the TAT charging `actual` then would have set (a TAT from before the
      // reservation, of a key dropped since, counts from a full bucket at the reservation). At
      // most one burst of debt: the TAT stays within two buckets of the reservation (or of `now`,
      // if earlier), so that it is never taken for a clock that stepped back (`holdTicks`).
      const base = Math.min(chargedAt, now) * unitsPerMs
      const tat = Math.max(slots[offset]!, base)
      const room = base + 2 * capacity - tat
      if (room <= 0) return
      const extra = Math.min(actual - charged, ceilDiv(room, unitsPerToken)) * unitsPerToken
      slots[offset] = tat + Math.min(room, extra)
    },
    freshAt(slots, offset) {
      return ceilDiv(slots[offset]!, unitsPerMs)
    },
  }
}
