import type { Decision } from '../decision.js'
import { type CalendarUnit, type CalendarWindows, calendarWindows, NOMINAL_MS } from './calendar.js'
import {
  checkWindow,
  costTooHigh,
  invalid,
  refuseUnknownParams,
  WINDOW_PARAMS,
  type WindowParams,
} from './params.js'
import type { Algorithm, StateSlots } from './types.js'

/** A fixed window aligned to the calendar: each day, ISO week, month or year, in a time zone. */
/** A fixed window's parameters: a window in ms, or a calendar unit in a zone. */
const FIXED_WINDOW_PARAMS = [...WINDOW_PARAMS, 'calendar', 'timeZone']

export type CalendarWindowParams = {
  readonly limit: number
  readonly calendar: CalendarUnit
  /** An IANA time zone, such as 'Europe/Paris'. @default 'UTC' */
  readonly timeZone?: string
}

/**
 * Fixed window: one counter per window. Windows of `windowMs` start at its multiples since the
 * epoch (so a day starts at 00:00 UTC); `calendar` windows start on the first instant of each
 * local day, Monday, month or year in `timeZone` (UTC by default), so a monthly quota resets on
 * the first of the month. State: [window start in ms, count].
 *
 * **Pro:** one counter; "resets at 00:00 UTC" is easy to explain and bill. **Con:** a client can
 * spend a full allowance on each side of a boundary, and denied clients all retry at the reset.
 * @example fixedWindow({ limit: 10_000, windowMs: 86_400_000 }) // a daily quota
 * @example fixedWindow({ limit: 1_000_000, calendar: 'month', timeZone: 'Europe/Paris' })
 */
export function fixedWindow(params: WindowParams | CalendarWindowParams): Algorithm {
  refuseUnknownParams('fixedWindow', params, FIXED_WINDOW_PARAMS)
  const calendar = 'calendar' in params ? calendarOf(params) : undefined
  const { limit, windowMs } =
    calendar === undefined
      ? checkWindow(params as WindowParams)
      : checkWindow({ limit: params.limit, windowMs: NOMINAL_MS[calendar.unit] })
  // The start of the window holding `t`, and the end of the window starting at `start`.
  const startOf =
    calendar === undefined
      ? (t: number) => t - (t % windowMs)
      : (t: number) => calendar.windowAt(t)[0]
  const endOf =
    calendar === undefined
      ? (start: number) => start + windowMs
      : (start: number) => calendar.windowAt(start)[1]

  /**
   * A stored window beyond the one after now's: the clock stepped back past the previous window.
   * Holding the key there would lock it out until the clock caught up, so its count moves to the
   * window after now's (nothing is forgiven). Not now's own: a step back that landed just before
   * a boundary would then hand out a fresh allowance a moment later, every time. A step back into
   * the previous window is held in the stored one.
   */
  function rebase(slots: StateSlots, offset: number, nowEnd: number): void {
    if (slots[offset]! > nowEnd) slots[offset] = nowEnd
  }

  return {
    name: 'fixed_window',
    limit,
    policy: { quota: limit, windowMs },
    params: {
      kind: 'window',
      limit,
      windowMs,
      ...(calendar === undefined ? {} : { calendar }),
    },
    stateSize: 2,
    init(slots, offset, now) {
      slots[offset] = startOf(now)
      slots[offset + 1] = 0
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      const nowStart = startOf(now)
      const nowEnd = endOf(nowStart)
      rebase(slots, offset, nowEnd)
      const stored = slots[offset]!
      // A clock that stepped back into an earlier window stays in the stored one.
      const start = Math.max(nowStart, stored)
      const count = start === stored ? slots[offset + 1]! : 0
      const untilEnd = (start === nowStart ? nowEnd : endOf(start)) - now
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
      rebase(slots, offset, endOf(startOf(now)))
      // Only a charge made in the window still stored can be given back; an older window is gone.
      if (startOf(chargedAt) !== slots[offset]) return
      slots[offset + 1] = Math.max(0, slots[offset + 1]! - cost)
    },
    // An empty window is kept until its end all the same: forgetting it would let a clock that
    // steps back into the previous window charge that window again, whose count was dropped
    // when the state moved on.
    freshAt(slots, offset) {
      return endOf(slots[offset]!)
    },
  }
}

function calendarOf(params: CalendarWindowParams): CalendarWindows {
  if ('windowMs' in params) {
    throw invalid('calendar', 'give windowMs or calendar, not both')
  }
  return calendarWindows(params.calendar, params.timeZone)
}
