import type { Decision } from '../decision.js'
import { inspectionCopy } from './inspection.js'
import {
  checkWindow,
  costTooHigh,
  invalid,
  refuseUnknownParams,
  WINDOW_PARAMS,
  type WindowParams,
} from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/** A log holds one timestamp per admitted unit, so its state grows with the limit. */
export const MAX_SLIDING_LOG_LIMIT = 100_000

/** Numbers before a log's ring: the index of the oldest entry, the entry count, the ring's room. */
const HEADER = 3

/**
 * Sliding log: the time of every admitted unit of cost, oldest first, in a ring. A request
 * passes when the units younger than `windowMs` plus its cost fit in `limit`. Only admitted
 * requests are logged, so hammering never pushes the retry time back.
 * State: [index of the oldest entry, entry count, room, `room` timestamps]. The full state has
 * room for `limit` entries; a store may keep a log in as little room as it holds and give it
 * more before a decision (`entries`), so a log costs what it holds, not what it may hold.
 *
 * **Pro:** exact in every rolling window; no edge burst to exploit. **Con:** memory grows with the
 * limit (8 bytes per unit): for small, security-relevant limits such as logins.
 * @example slidingLog({ limit: 5, windowMs: 60_000 })
 */
export function slidingLog(params: WindowParams): Algorithm {
  refuseUnknownParams('slidingLog', params, WINDOW_PARAMS)
  const { limit, windowMs } = checkWindow(params)
  if (limit > MAX_SLIDING_LOG_LIMIT) {
    throw invalid(
      'limit',
      `a sliding log keeps one timestamp per unit; at most ${MAX_SLIDING_LOG_LIMIT}, got ${limit} (use sliding_window for large limits)`,
    )
  }

  /**
   * The ring slot of the `n`th entry from the oldest. A state kept under a higher limit (the
   * rule was lowered) is read as a ring of the new limit, as it was written.
   */
  function slot(slots: StateSlots, offset: number, n: number): number {
    return offset + HEADER + ((slots[offset]! + n) % Math.min(limit, slots[offset + 2]!))
  }

  function newest(slots: StateSlots, offset: number): number {
    const size = slots[offset + 1]!
    return size === 0 ? 0 : slots[slot(slots, offset, size - 1)]!
  }

  /**
   * A newest entry more than one window after `now`: the clock stepped back. Holding the log
   * there would lock the key out until the clock caught up, so every entry moves back by the
   * same amount, the newest to `now`: the log keeps its count and order (nothing is forgiven)
   * and its entries age out within one window. A smaller step is held at the newest entry.
   */
  function rebase(slots: StateSlots, offset: number, now: number): void {
    const shift = newest(slots, offset) - now
    if (shift <= windowMs) return
    const size = slots[offset + 1]!
    for (let n = 0; n < size; n++) {
      const at = slot(slots, offset, n)
      slots[at] = slots[at]! - shift
    }
  }

  return {
    name: 'sliding_log',
    limit,
    policy: { quota: limit, windowMs },
    params: { kind: 'window', limit, windowMs },
    stateSize: limit + HEADER,
    entries: {
      header: HEADER,
      held: (slots, offset) => slots[offset + 1]!,
      move(from, fromOffset, to, toOffset, room) {
        const size = from[fromOffset + 1]!
        if (from === to) {
          // One buffer: the two places may overlap.
          const times = new Array<number>(size)
          for (let n = 0; n < size; n++) times[n] = from[slot(from, fromOffset, n)]!
          for (let n = 0; n < size; n++) to[toOffset + HEADER + n] = times[n]!
        } else {
          for (let n = 0; n < size; n++)
            to[toOffset + HEADER + n] = from[slot(from, fromOffset, n)]!
        }
        to[toOffset] = 0
        to[toOffset + 1] = size
        to[toOffset + 2] = room
      },
    },
    init(slots, offset) {
      slots[offset] = 0
      slots[offset + 1] = 0
      slots[offset + 2] = limit
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, HEADER + slots[offset + 2]!)
        offset = 0
      }
      rebase(slots, offset, now)
      const size = slots[offset + 1]!
      // Entries are in time order; a clock that stepped back is held at the newest entry.
      const at = Math.max(now, newest(slots, offset))
      let expired = 0
      while (expired < size && slots[slot(slots, offset, expired)]! <= at - windowMs) expired++
      const live = size - expired
      // Cost 0 only inspects: it passes even when a lowered limit leaves the log above it.
      if (cost > 0 && live + cost > limit) {
        // The request fits once the (live + cost − limit) oldest live entries have aged out.
        const blocking = slots[slot(slots, offset, expired + live + cost - limit - 1)]!
        return {
          allowed: false,
          // A limit lowered while the log still holds more entries leaves it above the limit.
          remaining: Math.max(0, limit - live),
          limit,
          resetAfterMs: newest(slots, offset) + windowMs - now,
          retryAfterMs: blocking + windowMs - now,
        }
      }
      if (commit) {
        slots[offset] = (slots[offset]! + expired) % Math.min(limit, slots[offset + 2]!)
        for (let n = live; n < live + cost; n++) slots[slot(slots, offset, n)] = at
        slots[offset + 1] = live + cost
      }
      const newestAfter = cost > 0 ? at : live > 0 ? newest(slots, offset) : 0
      return {
        allowed: true,
        remaining: Math.max(0, limit - live - cost),
        limit,
        resetAfterMs: live + cost === 0 ? 0 : newestAfter + windowMs - now,
        retryAfterMs: undefined,
      }
    },
    refund,
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual < charged) return refund(slots, offset, charged - actual, chargedAt, now)
      if (actual === charged) return
      rebase(slots, offset, now)
      const size = slots[offset + 1]!
      const at = Math.max(now, newest(slots, offset))
      // Logged at the reservation while it is still inside the window, as charging `actual` then
      // would have logged it; once it has aged out, at `now` (the fixed window says why).
      const when = chargedAt > at - windowMs ? Math.min(chargedAt, at) : at
      // The live entries, in time order, with the extra among them.
      const times: number[] = []
      let inserted = false
      for (let n = 0; n <= size; n++) {
        const time = n < size ? slots[slot(slots, offset, n)]! : Number.POSITIVE_INFINITY
        if (!inserted && time > when) {
          // More than a limit of them would all be dropped below.
          for (let k = Math.min(actual - charged, limit); k > 0; k--) times.push(when)
          inserted = true
        }
        if (n < size && time > at - windowMs) times.push(time)
      }
      // The log holds at most its room (its limit): keeping the newest entries loses no decision,
      // since a log that full refuses everything until its oldest kept entry ages out, which is
      // when the longer log would make room too.
      const kept = Math.min(times.length, limit, slots[offset + 2]!)
      const from = times.length - kept
      for (let n = 0; n < kept; n++) slots[offset + HEADER + n] = times[from + n]!
      slots[offset] = 0
      slots[offset + 1] = kept
    },
    freshAt(slots, offset) {
      return slots[offset + 1] === 0 ? 0 : newest(slots, offset) + windowMs
    },
  }

  function refund(
    slots: StateSlots,
    offset: number,
    cost: number,
    chargedAt: number,
    now: number,
  ): void {
    rebase(slots, offset, now)
    // Drop up to `cost` entries logged at `chargedAt`, if they are still inside the window.
    if (chargedAt <= now - windowMs) return
    const size = slots[offset + 1]!
    const kept: number[] = []
    let removed = 0
    for (let n = 0; n < size; n++) {
      const time = slots[slot(slots, offset, n)]!
      if (removed < cost && time === chargedAt) removed++
      else kept.push(time)
    }
    for (let n = 0; n < kept.length; n++) slots[offset + HEADER + n] = kept[n]!
    slots[offset] = 0
    slots[offset + 1] = kept.length
  }
}
