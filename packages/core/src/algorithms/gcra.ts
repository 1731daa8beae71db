import type { Decision } from '../decision.js'
import { ceilDiv, floorDiv, MAX_TIME_MS } from './integer.js'
import { costTooHigh, invalid, type RateParams, scaleRate } from './params.js'
import type { Algorithm } from './types.js'

/**
 * GCRA, the generic cell rate algorithm: token-bucket decisions kept as one number per key, the
 * theoretical arrival time (TAT) of the next request. Time is counted in ticks of
 * 1/`unitsPerMs` ms so that the emission interval (`unitsPerToken` ticks) is a whole number even
 * for rates such as 3 per second. A request is allowed while TAT − now stays within the burst.
 *
 * **Pro:** one timestamp of state; same decisions as `tokenBucket`. **Con:** needs a clock every
 * checker agrees on (in Redis, the server's).
 * @example gcra({ rate: 10, burst: 20 })
 */
export function gcra(params: RateParams): Algorithm {
  const { burst, unitsPerMs, unitsPerToken, capacity, rate, periodMs } = scaleRate(params)
  if (MAX_TIME_MS * unitsPerMs + 2 * capacity > Number.MAX_SAFE_INTEGER) {
    throw invalid(
      'rate',
      `${rate} per ${periodMs} ms is too fine-grained for GCRA's integer clock; use token_bucket, or a rate that reduces to at most 2047 per ms-multiple`,
    )
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
      const nowTicks = now * unitsPerMs
      // A TAT in the past means a full bucket; a clock that stepped back only makes TAT look
      // further ahead, which is stingier, never looser.
      const tat = Math.max(slots[offset]!, nowTicks)
      const ahead = tat - nowTicks + cost * unitsPerToken
      // Cost 0 only inspects: it passes even when the TAT looks more than a bucket ahead.
      if (cost > 0 && ahead > capacity) {
        return {
          allowed: false,
          // Below zero when the TAT is further ahead than a full bucket: a clock that stepped
          // back, or a burst lowered while keys still hold state.
          remaining: Math.max(0, floorDiv(capacity - (tat - nowTicks), unitsPerToken)),
          limit: burst,
          resetAfterMs: ceilDiv(tat - nowTicks, unitsPerMs),
          retryAfterMs: ceilDiv(ahead - capacity, unitsPerMs),
        }
      }
      if (commit) slots[offset] = nowTicks + ahead
      return {
        allowed: true,
        remaining: Math.max(0, floorDiv(capacity - ahead, unitsPerToken)),
        limit: burst,
        resetAfterMs: ceilDiv(ahead, unitsPerMs),
        retryAfterMs: undefined,
      }
    },
    refund(slots, offset, cost, _chargedAt, now) {
      slots[offset] = Math.max(now * unitsPerMs, slots[offset]! - cost * unitsPerToken)
    },
    freshAt(slots, offset) {
      return ceilDiv(slots[offset]!, unitsPerMs)
    },
  }
}
