import { CALENDAR_UNITS, type CalendarUnit } from './calendar-unit.js'
import { invalid } from './params.js'

export type { CalendarUnit } from './calendar-unit.js'

/** A window as [start, end): whole ms since the epoch. */
export type WindowSpan = readonly [start: number, end: number]

/**
 * Where the windows of one calendar unit in one time zone start and end. Boundaries are the
 * first instant of a local date (local midnight, or the first instant after it when midnight
 * falls in a daylight-saving gap), so a window is 23 or 25 hours long across a transition.
 */
export type CalendarWindows = {
  readonly unit: CalendarUnit
  /** The IANA zone, canonical ('Europe/Paris'), or 'UTC'. */
  readonly timeZone: string
  /** The window containing `t`. */
  windowAt(t: number): WindowSpan
}

const DAY_MS = 86_400_000
/** Further from UTC than any zone has ever been (Asia/Manila kept +15:56 until 1845). */
const FURTHEST_OFFSET_MS = 57_600_000 // 16 h, written out (see NOMINAL_MS)

/**
 * The mean lengths of each unit (the Gregorian year is 365.2425 days): what a calendar window
 * sends as its policy's window, which cannot vary from one window to the next.
 */
// Written out (7 days as 604,800,000 ms): a product would keep this table in every bundle of
// the built chunks, used or not, as a bundler cannot tell that it has no side effects.
export const NOMINAL_MS: Readonly<Record<CalendarUnit, number>> = {
  day: DAY_MS,
  week: 604_800_000,
  month: 2_629_746_000,
  year: 31_556_952_000,
}

/** A local date, as the proleptic Gregorian calendar numbers it (month 1–12). */
type LocalDate = { readonly year: number; readonly month: number; readonly day: number }

/**
 * The windows of `unit` in `timeZone` (default UTC). Uses `Intl.DateTimeFormat`, which every
 * runtime has, for any zone but UTC; each window is computed once and kept while requests fall
 * in it. Throws `ERR_RL_INVALID_RULE` naming `timeZone` for a zone the runtime does not know.
 */
export function calendarWindows(unit: CalendarUnit, timeZone?: string): CalendarWindows {
  if (!CALENDAR_UNITS.includes(unit)) {
    throw invalid('calendar', `expected one of ${CALENDAR_UNITS.join(', ')}, got ${String(unit)}`)
  }
  const zone = timeZone === undefined ? 'UTC' : canonicalZone(timeZone)
  const wall = zone === 'UTC' ? utcWall : zoneWall(zone)
  // The last few windows asked for: a decision looks at now's window and, near a boundary or
  // after a clock step, the next one.
  const recent: WindowSpan[] = []

  /** The earliest instant whose local time is at or after the local midnight starting `date`. */
  function startOf(date: LocalDate): number {
    const midnight = Date.UTC(date.year, date.month - 1, date.day)
    if (wall === utcWall) return midnight
    const reached = (t: number) => wall(t) >= midnight
    // Usually the offset at midnight gives it at once; a daylight-saving gap needs a search.
    const guess = midnight - (wall(midnight) - midnight)
    if (reached(guess) && !reached(guess - 1000)) return guess
    // Boundaries are whole seconds (offsets are): search seconds.
    let low = (midnight - FURTHEST_OFFSET_MS) / 1000
    let high = (midnight + FURTHEST_OFFSET_MS) / 1000
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2)
      if (reached(middle * 1000)) high = middle
      else low = middle
    }
    return high * 1000
  }

  function spanOf(date: LocalDate): WindowSpan {
    const first = firstDateOf(unit, date)
    return [startOf(first), startOf(nextFirstDate(unit, first))]
  }

  return {
    unit,
    timeZone: zone,
    windowAt(t) {
      for (const span of recent) if (t >= span[0] && t < span[1]) return span
      let span = spanOf(localDate(wall(t)))
      // A clock set back across midnight shows the previous date again after the next window
      // started: windows stay contiguous, so such an instant belongs to the window it lies in.
      while (t >= span[1]) span = spanOf(localDate(wall(span[1])))
      while (t < span[0]) span = spanOf(localDate(wall(span[0] - 1000)))
      if (recent.unshift(span) > 3) recent.pop()
      return span
    },
  }
}

/** The first local date of the period that contains `date`. */
function firstDateOf(unit: CalendarUnit, date: LocalDate): LocalDate {
  switch (unit) {
    case 'day':
      return date
    case 'week': {
      const weekday = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay()
      return shiftDays(date, -((weekday + 6) % 7))
    }
    case 'month':
      return { year: date.year, month: date.month, day: 1 }
    case 'year':
      return { year: date.year, month: 1, day: 1 }
  }
}

/** The first local date of the period after the one starting at `first`. */
function nextFirstDate(unit: CalendarUnit, first: LocalDate): LocalDate {
  switch (unit) {
    case 'day':
      return shiftDays(first, 1)
    case 'week':
      return shiftDays(first, 7)
    case 'month':
      return first.month === 12
        ? { year: first.year + 1, month: 1, day: 1 }
        : { year: first.year, month: first.month + 1, day: 1 }
    case 'year':
      return { year: first.year + 1, month: 1, day: 1 }
  }
}

function shiftDays(date: LocalDate, days: number): LocalDate {
  return localDate(Date.UTC(date.year, date.month - 1, date.day) + days * DAY_MS)
}

/** The date of a local time written as ms since the epoch of its wall clock. */
function localDate(wallMs: number): LocalDate {
  const d = new Date(wallMs)
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }
}

function utcWall(t: number): number {
  return t
}

/** The local wall time at `t` in `timeZone`, as ms since the epoch of that wall clock. */
function zoneWall(timeZone: string): (t: number) => number {
  const format = zoneFormat(timeZone)
  return (t) => {
    const within = t % 1000
    const fields: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {}
    for (const part of format.formatToParts(t - within)) {
      if (part.type !== 'literal') fields[part.type] = Number(part.value)
    }
    return (
      Date.UTC(
        fields.year!,
        fields.month! - 1,
        fields.day!,
        fields.hour!,
        fields.minute!,
        fields.second!,
      ) + within
    )
  }
}

function zoneFormat(timeZone: string): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
  } catch {
    throw invalid(
      'timeZone',
      `unknown time zone ${JSON.stringify(timeZone)}; expected an IANA name such as "Europe/Paris" or "America/New_York"`,
    )
  }
}

/** `timeZone` as the runtime names it ('europe/paris' is Europe/Paris), or as given when unknown. */
export function zoneName(timeZone: string): string {
  try {
    return canonicalZone(timeZone)
  } catch {
    return timeZone
  }
}

function canonicalZone(timeZone: string): string {
  if (typeof timeZone !== 'string' || timeZone === '') {
    throw invalid('timeZone', `expected an IANA time zone name, got ${JSON.stringify(timeZone)}`)
  }
  return zoneFormat(timeZone).resolvedOptions().timeZone
}
