import type { Decision } from '../decision.js'
import { shown } from '../options/option-values.js'
import {
  type CalendarUnit,
  type CalendarWindows,
  calendarWindows,
  NOMINAL_MS,
  zoneName,
} from './calendar.js'
import { isCalendarUnit } from './calendar-unit.js'
import { inspectionCopy } from './inspection.js'
import { PACKED_CAPACITY_LIMIT } from './packed-state.js'
import {
  checkWindow,
  costTooHigh,
  invalid,
  refuseUnknownParams,
  WINDOW_PARAMS,
  type WindowParams,
} from './params.js'
import { type RuleFieldAccess, type RuleFieldValues, withRuleFields } from './rule-fields.js'
import type { Algorithm, StateSlots } from './types.js'

/** A fixed window's parameters: a window in ms, or a calendar unit in a zone. */
const FIXED_WINDOW_PARAMS = [...WINDOW_PARAMS, 'calendar', 'timeZone', 'anchor']

/**
 * Where a fixed window of `windowMs` starts: at the multiples of `windowMs` since the epoch
 * (`'epoch'`, every process and the Redis scripts agree on the boundaries), or at the key's
 * first charge after its previous window ended (`'first-charge'`, express-rate-limit's window:
 * a key's first request sees the whole window ahead of it). The memory store runs both; the
 * Redis scripts run epoch windows only.
 */
type FixedWindowAnchor = 'epoch' | 'first-charge'

/** A fixed window of `windowMs`, and where its windows start. */
export type FixedWindowParams = WindowParams & {
  /** @default 'epoch' */
  readonly anchor?: FixedWindowAnchor
}

/** A fixed window aligned to the calendar: each day, ISO week, month or year, in a time zone. */
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
export const fixedWindow: (params: FixedWindowParams | CalendarWindowParams) => Algorithm =
  /* @__PURE__ */ withRuleFields(windowRule, { takes: ['timeZone'], read: readCalendarFields })

function windowRule(params: FixedWindowParams | CalendarWindowParams): Algorithm {
  refuseUnknownParams('fixedWindow', params, FIXED_WINDOW_PARAMS)
  const calendar = 'calendar' in params ? calendarOf(params) : undefined
  const { limit, windowMs } =
    calendar === undefined
      ? checkWindow(params as WindowParams)
      : checkWindow({ limit: params.limit, windowMs: NOMINAL_MS[calendar.unit] })
  const anchor = (params as FixedWindowParams).anchor
  const anchored = anchor === 'first-charge'
  if (anchor !== undefined && (calendar || (!anchored && anchor !== 'epoch')))
    throw invalid('anchor', String(anchor))
  // The start of the window holding `t`, and the end of the window starting at `start`. A
  // window anchored on its first charge starts at that charge: a key whose window has ended
  // opens the next one at `now` (see `decide`).
  const startOf =
    calendar === undefined
      ? anchored
        ? (t: number) => t
        : (t: number) => t - (t % windowMs)
      : (t: number) => calendar.windowAt(t)[0]
  const endOf =
    calendar === undefined
      ? (start: number) => start + windowMs
      : (start: number) => calendar.windowAt(start)[1]

  /**
   * A stored window that starts more than one window after `now`: the clock stepped back further
   * than the rule's reset span (a step back of up to a window is held in the stored window).
   * Holding the key there would lock it out until the clock caught up, so its count moves
   * (nothing is forgiven) into a window that starts at `now` itself and lasts a whole window:
   * the key waits at most one window, its reset span. Not into now's own window on the epoch's
   * boundaries, which ends sooner: a clock that stepped back just before a boundary would then
   * open a fresh allowance a moment later, every time it happened; nor into the window after
   * now's, which would keep the key waiting up to two windows. The windows after a moved one
   * follow on from its end, a window at a time, until the key rests until a boundary (`decide`).
   * A calendar window keeps its calendar boundaries, which are what a quota bills by: its count
   * moves into the window after now's.
   */
  function rebase(slots: StateSlots, offset: number, now: number, nowEnd: number): void {
    const stored = slots[offset]!
    if (calendar !== undefined) {
      if (stored > nowEnd) slots[offset] = nowEnd
    } else if (stored - now > windowMs) slots[offset] = now
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
      ...(anchored && { anchor }),
    },
    stateSize: 2,
    // The memory store keeps a state that fits in two uint32 words (store/packed-forms.ts).
    packed: limit < PACKED_CAPACITY_LIMIT || undefined,
    init(slots, offset, now) {
      slots[offset] = startOf(now)
      slots[offset + 1] = 0
    },
    decide(slots, offset, cost, now, commit): Decision {
      if (cost > limit) throw costTooHigh(cost, limit)
      // An inspection decides on a copy: it writes nothing (inspection.ts).
      if (cost === 0) {
        slots = inspectionCopy(slots, offset, 2)
        offset = 0
      }
      const nowStart = startOf(now)
      const nowEnd = endOf(nowStart)
      rebase(slots, offset, now, nowEnd)
      const stored = slots[offset]!
      const storedEnd = endOf(stored)
      // The stored window while it lasts (a clock that stepped back into the window before it is
      // held there); then now's window, unless that began before the stored one ended (a window
      // moved off the boundaries by a step back): then the one that follows on from its end, so
      // that no window is shorter than `windowMs` and none hands out an allowance early.
      const start = now < storedEnd ? stored : Math.max(nowStart, storedEnd)
      const count = start === stored ? slots[offset + 1]! : 0
      const end = start === stored ? storedEnd : start === nowStart ? nowEnd : endOf(start)
      const untilEnd = end - now
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
      rebase(slots, offset, now, endOf(startOf(now)))
      // Only a charge made in the window still stored can be given back; an older window is gone.
      const stored = slots[offset]!
      if (chargedAt < stored || chargedAt >= endOf(stored)) return
      slots[offset + 1] = Math.max(0, slots[offset + 1]! - cost)
    },
    settle(slots, offset, charged, actual, chargedAt, now) {
      if (actual === charged) return
      const nowStart = startOf(now)
      const nowEnd = endOf(nowStart)
      rebase(slots, offset, now, nowEnd)
      const stored = slots[offset]!
      const storedEnd = endOf(stored)
      // The charge's window is still the one counting: its count becomes what charging `actual`
      // would have made, above the limit if need be (nothing more passes until the window ends).
      if (now < storedEnd && chargedAt >= stored && chargedAt < storedEnd) {
        slots[offset + 1] = Math.max(0, slots[offset + 1]! + actual - charged)
        return
      }
      // Its window has rolled over: nothing comes back, and an extra is charged to the window
      // of `now`, opened as `decide` opens it. A window never repays a debt by time, so dropping
      // the extra would let any request that outlives its window go without paying it.
      if (actual < charged) return
      const start = now < storedEnd ? stored : Math.max(nowStart, storedEnd)
      const count = start === stored ? slots[offset + 1]! : 0
      slots[offset] = start
      slots[offset + 1] = count + actual - charged
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

/**
 * Reads a calendar window's `timeZone` into `values` (its window already read); a zone without a
 * calendar window is refused. False after reporting a problem.
 */
function readCalendarFields(rule: RuleFieldAccess, values: RuleFieldValues): boolean {
  const { timeZone } = rule.fields
  if (timeZone === undefined) return true
  if (!isCalendarUnit(values.window)) {
    rule.issue(
      rule.labels.timeZone,
      `only for a calendar window (${rule.labels.window}: day, week, month or year); remove it`,
    )
  } else if (typeof timeZone !== 'string') {
    rule.issue(
      rule.labels.timeZone,
      `expected an IANA time zone name such as "Europe/Paris", got ${shown(timeZone)}`,
    )
  } else {
    // The zone as the runtime names it; one it does not know is refused when the window is built.
    values.timeZone = zoneName(timeZone)
    return true
  }
  return false
}
