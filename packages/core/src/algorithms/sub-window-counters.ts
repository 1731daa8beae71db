import type { Decision } from '../decision.js'
import { inspectionCopy } from './inspection.js'
import { costTooHigh, invalid } from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/** One number per counter in each key's state: more would make the state a log's size. */
const MAX_BUCKETS = 100

/**
 * The sliding window as `buckets` counters per window, each counting the requests of one
 * sub-window of `windowMs / buckets` ms (Figma's choice, with 60): a request passes when the
 * counts of the sub-window of `now` and the `buckets − 1` before it, plus its cost, fit in
 * `limit`. A sub-window's requests leave the count all at once, when it ages out, so the estimate
 * errs only on the sub-window at the window's far end: the error against an exact sliding log
 * shrinks as the count of buckets grows, and a retry time is exact: the moment enough of the
 * oldest sub-windows have aged out.
 *
 * State: [start of the newest sub-window counted, then one count per sub-window in a ring: the
 * sub-window starting at n × width lives in slot 1 + (n mod buckets)].
 */
export function subWindowCounters(limit: number, windowMs: number, buckets: number): Algorithm {
  if (!Number.isSafeInteger(buckets) || buckets < 2 || buckets > MAX_BUCKETS) {
    throw invalid(
      'buckets',
      `expected a whole number from 2 to ${MAX_BUCKETS} (1 would be a fixed window), got ${buckets}`,
    )
  }
  if (windowMs % buckets !== 0) {
    throw invalid(
      'buckets',
      `each of the ${buckets} sub-windows must be whole ms: ${windowMs} ms does not divide by ${buckets}`,
    )
  }
  const width = windowMs / buckets

  // Sub-windows before the epoch's (a window reaching back past 0) wrap around too.
  const slotOf = (offset: number, n: number) => offset + 1 + (((n % buckets) + buckets) % buckets)

  /**
   * A newest sub-window more than one window after `now`: the clock stepped back. Every count
   * moves back by the same number of sub-windows, the newest to now's, as the sliding log moves
   * its entries: nothing is forgiven, and everything ages out within one window.
   */
  function rebase(slots: StateSlots, offset: number, now: number): void {
    const newest = slots[offset]! / width
    const nowIndex = Math.floor(now / width)
    if ((newest - nowIndex) * width <= windowMs) return
    const counts = new Array<number>(buckets)
    for (let j = 0; j < buckets; j++) counts[j] = slots[slotOf(offset, newest - j)]!
    for (let j = 0; j < buckets; j++) slots[slotOf(offset, nowIndex - j)] = counts[j]!
    slots[offset] = nowIndex * width
  }

  /** Sub-windows still counted at sub-window `at` (≥ the newest): their first index and sum. */
  function liveCounts(slots: StateSlots, offset: number, at: number) {
    const newest = slots[offset]! / width
    const oldest = Math.max(at - buckets + 1, newest - buckets + 1)
    let sum = 0
    for (let n = oldest; n <= newest; n++) sum += slots[slotOf(offset, n)]!
    return { oldest, newest, sum }
  }

  /** The ms after which the newest non-empty sub-window up to `newest` ages out, or 0. */
  function resetAt(slots: StateSlots, offset: number, oldest: number, newest: number): number {
    for (let n = newest; n >= oldest; n--) {
      if (slots[slotOf(offset, n)]! > 0) return (n + buckets) * width
    }
    return 0
  }

  return {
    name: 'sliding_window',
    limit,
    policy: { quota: limit, windowMs },
    params: { kind: 'window', limit, windowMs, buckets },
    stateSize: buckets + 1,
    init(slots, offset, now) {
      slots[offset] = now - (now % width)
      for (let j = 1; j <= buckets; j++) slots[offset + j] = 0
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, buckets + 1)
        offset = 0
      }
      rebase(slots, offset, now)
      // A clock that stepped back is held at the newest sub-window.
      const at = Math.max(Math.floor(now / width), slots[offset]! / width)
      const { oldest, newest, sum } = liveCounts(slots, offset, at)
      // Cost 0 only inspects: it passes even when a lowered limit leaves the count above it.
      if (cost > 0 && sum + cost > limit) {
        // Fits once the oldest sub-windows holding (sum + cost − limit) have aged out.
        let n = oldest
        let expiring = sum + cost - limit - slots[slotOf(offset, n)]!
        while (expiring > 0) {
          n++
          expiring -= slots[slotOf(offset, n)]!
        }
        return {
          allowed: false,
          remaining: Math.max(0, limit - sum),
          limit,
          resetAfterMs: resetAt(slots, offset, oldest, newest) - now,
          retryAfterMs: (n + buckets) * width - now,
        }
      }
      if (commit && cost > 0) {
        // Sub-windows between the newest and now's start empty.
        for (let n = Math.max(newest + 1, at - buckets + 1); n <= at; n++) {
          slots[slotOf(offset, n)] = 0
        }
        slots[offset] = at * width
        slots[slotOf(offset, at)] = slots[slotOf(offset, at)]! + cost
      }
      const reset = cost > 0 ? (at + buckets) * width : resetAt(slots, offset, oldest, newest)
      return {
        allowed: true,
        remaining: Math.max(0, limit - sum - cost),
        limit,
        resetAfterMs: reset === 0 ? 0 : reset - now,
        retryAfterMs: undefined,
      }
    },
    refund(slots, offset, cost, chargedAt, now) {
      rebase(slots, offset, now)
      const charged = Math.floor(chargedAt / width)
      const newest = slots[offset]! / width
      // Only a sub-window still counted holds the charge.
      if (charged > newest || charged <= newest - buckets) return
      const slot = slotOf(offset, charged)
      slots[slot] = Math.max(0, slots[slot]! - cost)
    },
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual === charged) return
      rebase(slots, offset, now)
      const index = Math.floor(chargedAt / width)
      const at = Math.max(Math.floor(now / width), slots[offset]! / width)
      if (index > slots[offset]! / width && index <= at) {
        // Not written since before the reservation's sub-window (one of cost 0 writes nothing):
        // moved on to it first, as a charge then would have.
        const from = slots[offset]! / width
        for (let n = Math.max(from + 1, index - buckets + 1); n <= index; n++) {
          slots[slotOf(offset, n)] = 0
        }
        slots[offset] = index * width
      }
      const newest = slots[offset]! / width
      // The charge's sub-window is still counted at `now`: its count becomes what charging
      // `actual` would have made, above the limit if need be.
      if (index <= newest && index > at - buckets) {
        const slot = slotOf(offset, index)
        slots[slot] = Math.max(0, slots[slot]! + actual - charged)
        return
      }
      // It has aged out: nothing comes back, and an extra is charged to `now`'s sub-window, as
      // `decide` charges it (the fixed window says why).
      if (actual < charged) return
      for (let n = Math.max(newest + 1, at - buckets + 1); n <= at; n++) {
        slots[slotOf(offset, n)] = 0
      }
      slots[offset] = at * width
      slots[slotOf(offset, at)] = slots[slotOf(offset, at)]! + actual - charged
    },
    freshAt(slots, offset) {
      const newest = slots[offset]! / width
      return resetAt(slots, offset, newest - buckets + 1, newest)
    },
  }
}
