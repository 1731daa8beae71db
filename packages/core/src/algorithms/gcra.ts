import type { Decision } from '../decision.js'
import { ceilDiv, floorDiv, MAX_TIME_MS } from './integer.js'
import { costTooHigh, type RateParams, scaleRate } from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/**
 * GCRA, the generic cell rate algorithm: token-bucket decisions kept as one moment per key, the
 * theoretical arrival time (TAT) of the next request. Time is counted in ticks of
 * 1/`unitsPerMs` ms so that the emission interval (`unitsPerToken` ticks) is a whole number even
 * for rates such as 3 per second. A request is allowed while TAT − now stays within the burst.
 *
 * The TAT is kept as one number, ticks since the epoch, when every such number stays below 2^53
 * (rates that reduce to at most about 2,000 units per ms: 10 per second, 1,000 per minute);
 * finer rates (2,053 per second, 10,000 per second) keep two, whole ms and the ticks beyond
 * them. Either way the arithmetic works on how far the TAT lies ahead, split into whole ms and
 * ticks, so no intermediate reaches 2^53 for any rate the token bucket takes.
 *
 * **Pro:** one timestamp of state; same decisions as `tokenBucket`. **Con:** needs a clock every
 * checker agrees on (in Redis, the server's).
 * @example gcra({ rate: 10, burst: 20 })
 */
export function gcra(params: RateParams): Algorithm {
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaleRate(params)
  const fillMs = ceilDiv(capacity, unitsPerMs)
  const split = !fitsInTicks(unitsPerMs, capacity)
  // The TAT ahead of now, as whole ms and ticks beyond them (0 ≤ aheadTicks < unitsPerMs).
  let aheadMs = 0
  let aheadTicks = 0

  /** Reads how far the TAT lies ahead of `now` (none when it has passed: a full bucket). */
  function readAhead(slots: StateSlots, offset: number, now: number): void {
    if (split) {
      aheadMs = slots[offset]! - now
      aheadTicks = slots[offset + 1]!
    } else {
      const ticks = slots[offset]! - now * unitsPerMs
      aheadMs = floorDiv(ticks, unitsPerMs)
      aheadTicks = ticks - aheadMs * unitsPerMs
    }
    if (aheadMs < 0) aheadMs = aheadTicks = 0
    // More than two fill times ahead cannot happen on a steady clock (one at most), nor after a
    // step back the key is held for (another fill time, so that clocks that disagree by less
    // never refill twice): the clock stepped back further. The key is moved to a drained bucket
    // at `now` instead of being locked out for the whole step; kept even on a denial.
    if (aheadMs > 2 * fillMs) {
      aheadMs = floorDiv(capacity, unitsPerMs)
      aheadTicks = capacity - aheadMs * unitsPerMs
      write(slots, offset, now)
    }
  }

  /** Moves the TAT `units` ticks (a cost, either sign), never before `now`. */
  function shift(units: number): void {
    const ms = floorDiv(units, unitsPerMs)
    aheadMs += ms
    aheadTicks += units - ms * unitsPerMs
    if (aheadTicks >= unitsPerMs) {
      aheadMs += 1
      aheadTicks -= unitsPerMs
    }
    if (aheadMs < 0) aheadMs = aheadTicks = 0
  }

  function write(slots: StateSlots, offset: number, now: number): void {
    if (split) {
      slots[offset] = now + aheadMs
      slots[offset + 1] = aheadTicks
    } else {
      slots[offset] = (now + aheadMs) * unitsPerMs + aheadTicks
    }
  }

  return {
    name: 'gcra',
    limit: burst,
    policy: { quota: rate, windowMs: periodMs },
    params: { kind: 'rate', unitsPerMs, unitsPerToken, capacity, burst },
    stateSize: split ? 2 : 1,
    init(slots, offset, now) {
      aheadMs = aheadTicks = 0
      write(slots, offset, now)
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > burst) throw costTooHigh(cost, burst)
      readAhead(slots, offset, now)
      const need = cost * unitsPerToken
      const resetAfterMs = aheadMs + (aheadTicks > 0 ? 1 : 0)
      // Beyond a fill time ahead the bucket is below empty (a clock that stepped back, or a
      // burst lowered while keys still hold state): nothing remains. Within it, the ticks ahead
      // stay below capacity + 2 × unitsPerMs, a safe integer.
      const ticks = aheadMs > fillMs ? undefined : aheadMs * unitsPerMs + aheadTicks
      const fits = ticks !== undefined && ticks <= capacity - need
      // Cost 0 only inspects: it passes even when the TAT looks more than a bucket ahead.
      if (cost > 0 && !fits) {
        return {
          allowed: false,
          remaining:
            ticks === undefined || ticks > capacity ? 0 : floorDiv(capacity - ticks, unitsPerToken),
          limit: burst,
          resetAfterMs,
          // ceil((TAT ahead + need − capacity) / unitsPerMs), without forming the sum
          retryAfterMs: aheadMs + ceilDiv(aheadTicks + need - capacity, unitsPerMs),
        }
      }
      if (!fits)
        return { allowed: true, remaining: 0, limit: burst, resetAfterMs, retryAfterMs: undefined }
      const after = ticks + need
      if (commit) {
        shift(need)
        write(slots, offset, now)
      }
      return {
        allowed: true,
        remaining: floorDiv(capacity - after, unitsPerToken),
        limit: burst,
        resetAfterMs: ceilDiv(after, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund(slots, offset, cost, _chargedAt, now) {
      readAhead(slots, offset, now)
      shift(-cost * unitsPerToken)
      write(slots, offset, now)
    },
    freshAt(slots, offset) {
      if (split) return slots[offset]! + (slots[offset + 1]! > 0 ? 1 : 0)
      return ceilDiv(slots[offset]!, unitsPerMs)
    },
  }
}

/**
 * Whether every TAT, in ticks since the epoch, stays a whole number below 2^53: up to two fill
 * times and a few ticks ahead of the latest time the algorithms take.
 */
export function fitsInTicks(unitsPerMs: number, capacity: number): boolean {
  return (MAX_TIME_MS + 2) * unitsPerMs + 2 * capacity + 4 * unitsPerMs <= Number.MAX_SAFE_INTEGER
}
