import type { Decision } from '../decision.js'
import { shown } from '../options/option-values.js'
import { inspectionCopy } from './inspection.js'
import { floorDiv, MAX_TIME_MS } from './integer.js'
import {
  checkWindow,
  costTooHigh,
  invalid,
  refuseUnknownParams,
  WINDOW_PARAMS,
  type WindowParams,
} from './params.js'
import { type RuleFieldAccess, type RuleFieldValues, withRuleFields } from './rule-fields.js'
import { subWindowCounters } from './sub-window-counters.js'
import type { Algorithm, StateSlots } from './types.js'

const SLIDING_WINDOW_PARAMS = [...WINDOW_PARAMS, 'buckets']

/**
 * A sliding window of `windowMs`, weighted from the previous window or counted in `buckets`
 * sub-windows.
 */
export type SlidingWindowParams = WindowParams & {
  /**
   * Count in this many sub-window counters (2 to 100; `windowMs` must divide by it) instead of
   * the previous and current windows' two: see `subWindowCounters`.
   */
  readonly buckets?: number
}

/**
 * Sliding window counter: this window's count plus the previous window's, weighted by how much
 * of it still overlaps the last `windowMs`. A request passes when
 * `previous × (W − elapsed) / W + current + cost ≤ limit`, evaluated multiplied through by W so
 * that it stays in integers. State: [current window start in ms, previous count, current count].
 *
 * **Pro:** two counters; smooths the fixed window's boundary burst. **Con:** an estimate: it
 * assumes the previous window's requests were spread evenly (Cloudflare measured 0.003% wrong).
 * With `buckets`, the window is counted in that many sub-windows instead (sub-window-counters.ts).
 * @example slidingWindow({ limit: 100, windowMs: 60_000 })
 * @example slidingWindow({ limit: 100, windowMs: 60_000, buckets: 60 })
 */
export const slidingWindow: (params: SlidingWindowParams) => Algorithm =
  /* @__PURE__ */ withRuleFields(slidingWindowRule, { takes: ['buckets'], read: readBuckets })

function slidingWindowRule(params: SlidingWindowParams): Algorithm {
  refuseUnknownParams('slidingWindow', params, SLIDING_WINDOW_PARAMS)
  const { limit, windowMs } = checkWindow(params)
  if (params.buckets !== undefined) return subWindowCounters(limit, windowMs, params.buckets)
  const budget = limit * windowMs
  if (3 * budget + MAX_TIME_MS > Number.MAX_SAFE_INTEGER) {
    throw invalid('limit', `limit × windowMs (${budget}) needs integers beyond 2^53`)
  }

  /**
   * A current window that starts more than two windows after `now`: the clock stepped back
   * further than the rule's reset span (a count weighs until the end of the window after its
   * own). Both counts move into the current window of `now`, where they weigh in full (nothing
   * is forgiven, and the estimate can only grow), so the key waits at most two windows. A smaller
   * step is held at the current window. Not one window: a step of one to two windows moved the
   * counts into a window whose weight ended before the stored one began, so a clock reading the
   * stored window again found them gone and admitted a second limit at once.
   */
  function rebase(slots: StateSlots, offset: number, now: number): void {
    if (slots[offset]! - now <= 2 * windowMs) return
    slots[offset] = now - (now % windowMs)
    slots[offset + 2] = slots[offset + 1]! + slots[offset + 2]!
    slots[offset + 1] = 0
  }

  return {
    name: 'sliding_window',
    limit,
    policy: { quota: limit, windowMs },
    params: { kind: 'window', limit, windowMs },
    stateSize: 3,
    init(slots, offset, now) {
      slots[offset] = now - (now % windowMs)
      slots[offset + 1] = 0
      slots[offset + 2] = 0
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 3)
        offset = 0
      }
      rebase(slots, offset, now)
      const stored = slots[offset]!
      const start = Math.max(now - (now % windowMs), stored)
      let previous = 0
      let current = 0
      if (start === stored) {
        previous = slots[offset + 1]!
        current = slots[offset + 2]!
      } else if (start === stored + windowMs) {
        previous = slots[offset + 2]!
      }
      // Held at the window start if the clock stepped back before it.
      const at = Math.max(now, start)
      const overlap = windowMs - (at - start)
      const used = previous * overlap + current * windowMs
      // Cost 0 only inspects: it passes even when a stepped-back clock or a lowered limit
      // leaves the weighted count above the budget.
      if (cost > 0 && used + cost * windowMs > budget) {
        return {
          allowed: false,
          remaining: Math.max(0, floorDiv(budget - used, windowMs)),
          limit,
          resetAfterMs: resetAt(start, previous, current) - now,
          retryAfterMs: retryAt(start, previous, current, cost) - now,
        }
      }
      const charged = current + cost
      if (commit) {
        slots[offset] = start
        slots[offset + 1] = previous
        slots[offset + 2] = charged
      }
      return {
        allowed: true,
        remaining: Math.max(0, floorDiv(budget - used - cost * windowMs, windowMs)),
        limit,
        resetAfterMs: Math.max(0, resetAt(start, previous, charged) - now),
        retryAfterMs: undefined,
      }
    },
    refund(slots, offset, cost, chargedAt, now) {
      rebase(slots, offset, now)
      const chargedStart = chargedAt - (chargedAt % windowMs)
      const stored = slots[offset]!
      // The charge sits in the current count while its window is the stored one, and in the
      // previous count for one more window; after that it no longer weighs anything.
      const index = chargedStart === stored ? 2 : chargedStart === stored - windowMs ? 1 : 0
      if (index === 0) return
      slots[offset + index] = Math.max(0, slots[offset + index]! - cost)
    },
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual === charged) return
      rebase(slots, offset, now)
      const chargedStart = chargedAt - (chargedAt % windowMs)
      if (chargedStart > slots[offset]! && chargedAt <= now) {
        // Not written since before the reservation's window (one of cost 0 writes nothing):
        // moved on to it first, as a charge then would have.
        const moved = chargedStart === slots[offset]! + windowMs ? slots[offset + 2]! : 0
        slots[offset] = chargedStart
        slots[offset + 1] = moved
        slots[offset + 2] = 0
      }
      const stored = slots[offset]!
      const current = Math.max(now - (now % windowMs), stored)
      // The charge weighs while its window is `now`'s or the one before: it sits in the stored
      // current count, or in the stored previous count while the stored window is `now`'s.
      const index =
        chargedStart === stored && current <= stored + windowMs
          ? 2
          : chargedStart === stored - windowMs && current === stored
            ? 1
            : 0
      if (index !== 0) {
        slots[offset + index] = Math.max(0, slots[offset + index]! + actual - charged)
        return
      }
      // It no longer weighs: nothing comes back, and an extra is charged to `now`'s window, as
      // the fixed window does (see there), opened as `decide` opens it.
      if (actual < charged) return
      const previous =
        current === stored
          ? slots[offset + 1]!
          : current === stored + windowMs
            ? slots[offset + 2]!
            : 0
      const count = current === stored ? slots[offset + 2]! : 0
      slots[offset] = current
      slots[offset + 1] = previous
      slots[offset + 2] = count + actual - charged
    },
    freshAt(slots, offset) {
      return resetAt(slots[offset]!, slots[offset + 1]!, slots[offset + 2]!)
    },
  }

  /** When the estimate falls to zero: the current count weighs until the end of the next window. */
  function resetAt(start: number, previous: number, current: number): number {
    if (current > 0) return start + 2 * windowMs
    if (previous > 0) return start + windowMs
    return 0
  }

  /** The first ms at which `cost` more fits under the estimate, solved in integers. */
  function retryAt(start: number, previous: number, current: number, cost: number): number {
    const room = (limit - current - cost) * windowMs
    if (room >= 0 && previous > 0) {
      // previous × (W − e) ≤ room  ⇔  e ≥ W − floor(room / previous)
      const elapsed = windowMs - floorDiv(room, previous)
      if (elapsed < windowMs) return start + elapsed
    }
    // In the next window the current count becomes the previous one, and nothing is current yet.
    if (current === 0) return start + windowMs
    const elapsed = Math.max(0, windowMs - floorDiv((limit - cost) * windowMs, current))
    return start + windowMs + elapsed
  }
}

/** Reads the count of sub-window counters into `values`; false after reporting a problem. */
function readBuckets(rule: RuleFieldAccess, values: RuleFieldValues): boolean {
  const { buckets } = rule.fields
  if (buckets === undefined) return true
  if (typeof buckets === 'number' && Number.isSafeInteger(buckets) && buckets >= 1) {
    values.buckets = buckets
    return true
  }
  rule.issue(rule.labels.buckets, `expected a whole number ≥ 1, got ${shown(buckets)}`)
  return false
}
