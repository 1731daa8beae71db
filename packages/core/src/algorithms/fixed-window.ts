import type { Decision } from '../decision.js'
import { checkWindow, costTooHigh, type WindowParams } from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/**
 * Fixed window: one counter per calendar window (windows start at multiples of `windowMs` since
 * the epoch, so a day starts at 00:00 UTC). State: [window start in ms, count].
 *
 * **Pro:** one counter; "resets at 00:00 UTC" is easy to explain and bill. **Con:** a client can
 * spend a full allowance on each side of a boundary, and denied clients all retry at the reset.
 * @example fixedWindow({ limit: 10_000, windowMs: 86_400_000 }) // a daily quota
 */
export function fixedWindow(params: WindowParams): Algorithm {
  const { limit, windowMs } = checkWindow(params)

  /**
   * A stored window that starts more than one window after `now`: the clock stepped back past
   * the previous window. Holding the key there would lock it out until the clock caught up, so
   * its count moves to the window of `now` (nothing is forgiven). A step back into the previous
   * window is held in the stored one.
   */
  function rebase(slots: StateSlots, offset: number, now: number): void {
    if (slots[offset]! - now > windowMs) slots[offset] = now - (now % windowMs)
  }

  return {
    name: 'fixed_window',
    limit,
    policy: { quota: limit, windowMs },
    params: { kind: 'window', limit, windowMs },
    stateSize: 2,
    init(slots, offset, now) {
      slots[offset] = now - (now % windowMs)
      slots[offset + 1] = 0
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      rebase(slots, offset, now)
      const stored = slots[offset]!
      // A clock that stepped back into an earlier window stays in the stored one.
      const start = Math.max(now - (now % windowMs), stored)
      const count = start === stored ? slots[offset + 1]! : 0
      const untilEnd = start + windowMs - now
      // Cost 0 only inspects: it passes even when a lowered limit leaves the count above it.
      if (cost > 0 && count + cost > limit) {
        return {
          allowed: false,
          // A limit lowered while the window still holds the old count leaves it above the limit.
          remaining: Math.max(0, limit - count),
          limit,
          resetAfterMs: untilEnd,
          retryAfterMs: untilEnd,
        }
      }
      const charged = count + cost
      if (commit) {
        slots[offset] = start
        slots[offset + 1] = charged
      }
      return {
        allowed: true,
        remaining: Math.max(0, limit - charged),
        limit,
        resetAfterMs: charged === 0 ? 0 : untilEnd,
        retryAfterMs: undefined,
      }
    },
    refund(slots, offset, cost, chargedAt, now) {
      rebase(slots, offset, now)
      // Only a charge made in the window still stored can be given back; an older window is gone.
      if (chargedAt - (chargedAt % windowMs) !== slots[offset]) return
      slots[offset + 1] = Math.max(0, slots[offset + 1]! - cost)
    },
    freshAt(slots, offset) {
      return slots[offset + 1] === 0 ? 0 : slots[offset]! + windowMs
    },
  }
}
