// Calendar windows against an independent reading of the calendar: UTC by day-number
// arithmetic, time zones through another formatter (sv-SE `toLocaleString`), across daylight
// saving, leap years and months of every length.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CalendarUnit, calendarWindows, zoneName } from './calendar.js'
import { MAX_TIME_MS } from './integer.js'

const DAY_MS = 86_400_000
const UNITS: readonly CalendarUnit[] = ['day', 'week', 'month', 'year']

/** Zones with 1 h, 30 min (Lord Howe) and historic midnight transitions, and fixed offsets. */
const ZONES = [
  'America/New_York',
  'Europe/Paris',
  'Europe/London',
  'Australia/Lord_Howe',
  'America/Sao_Paulo',
  'America/Havana',
  'Asia/Kolkata',
  'Asia/Tehran',
  'Pacific/Chatham',
  'Pacific/Apia',
  'Africa/Casablanca',
  'America/St_Johns',
]

/** Day number → [year, month 1–12, day], by Howard Hinnant's civil-from-days. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  )
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day]
}

/** [year, month, day] → day number, the inverse (days-from-civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = month > 2 ? month - 3 : month + 9
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** The first day number of the period holding day number `days` (1970-01-01 was a Thursday). */
function periodStartDay(unit: CalendarUnit, days: number): number {
  const [year, month] = civilFromDays(days)
  switch (unit) {
    case 'day':
      return days
    case 'week':
      return days - ((((days + 3) % 7) + 7) % 7)
    case 'month':
      return daysFromCivil(year, month, 1)
    case 'year':
      return daysFromCivil(year, 1, 1)
  }
}

/** The local date in `zone` at `t`, as a day number, read through another formatter. */
function localDay(zone: string, t: number): number {
  const text = new Date(t).toLocaleString('sv-SE', { timeZone: zone })
  const [, y, m, d] = /^(\d+)-(\d+)-(\d+)/.exec(text)!.map(Number)
  return daysFromCivil(y!, m!, d!)
}

const timeArb = fc.integer({ min: 0, max: MAX_TIME_MS - 400 * DAY_MS })

describe('calendar windows in UTC', () => {
  it('start and end where day-number arithmetic says, for every unit', () => {
    fc.assert(
      fc.property(timeArb, fc.constantFrom(...UNITS), (t, unit) => {
        const [start, end] = calendarWindows(unit).windowAt(t)
        const first = periodStartDay(unit, Math.floor(t / DAY_MS))
        expect(start).toBe(first * DAY_MS)
        // The next period starts the day after this one's last day.
        const lastDay = Math.floor(end / DAY_MS) - 1
        expect(periodStartDay(unit, lastDay)).toBe(first)
        expect(periodStartDay(unit, lastDay + 1)).toBe(lastDay + 1)
        expect(end % DAY_MS).toBe(0)
      }),
      { numRuns: 3000 },
    )
  })

  it('make February 29 days long in leap years only, and a month end on the 1st', () => {
    const month = calendarWindows('month')
    const days = (year: number) => {
      const [start, end] = month.windowAt(Date.UTC(year, 1, 10))
      return (end - start) / DAY_MS
    }
    expect([2000, 2024, 2028, 2100, 2026].map(days)).toEqual([29, 29, 29, 28, 28])
    expect(month.windowAt(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toEqual([
      Date.UTC(2026, 0, 1),
      Date.UTC(2026, 1, 1),
    ])
    expect(calendarWindows('year').windowAt(Date.UTC(2028, 5, 1))[1]).toBe(Date.UTC(2029, 0, 1))
  })

  it('starts ISO weeks on Monday', () => {
    // Thursday 1 January 1970: its week began on Monday 29 December 1969.
    expect(calendarWindows('week').windowAt(0)).toEqual([-3 * DAY_MS, 4 * DAY_MS])
    // Sunday 6 December 2026 ends the week of Monday 30 November.
    expect(calendarWindows('week').windowAt(Date.UTC(2026, 11, 6, 23))[0]).toBe(
      Date.UTC(2026, 10, 30),
    )
  })
})

describe('calendar windows in a time zone', () => {
  it('start on the first instant of the local period and end on the next one, contiguously', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }),
        fc.constantFrom(...UNITS),
        fc.constantFrom(...ZONES),
        (t, unit, zone) => {
          const windows = calendarWindows(unit, zone)
          const [start, end] = windows.windowAt(t)
          expect(start).toBeLessThanOrEqual(t)
          expect(end).toBeGreaterThan(t)
          const period = (at: number) => periodStartDay(unit, localDay(zone, at))
          // The last second before `start` lies in an earlier period; `start` is in this one's.
          expect(period(start - 1000)).toBeLessThan(period(start))
          expect(period(end - 1000)).toBe(period(start))
          expect(period(end)).toBeGreaterThan(period(start))
          // Whole seconds (offsets are), and the next window starts where this one ends.
          expect(Number.isInteger(start / 1000)).toBe(true)
          expect(windows.windowAt(end)[0]).toBe(end)
          expect(windows.windowAt(start - 1)[1]).toBe(start)
        },
      ),
      { numRuns: 1500 },
    )
  })

  it('make the days of a daylight-saving change 23 and 25 hours long', () => {
    const day = calendarWindows('day', 'America/New_York')
    const hours = (t: number) => {
      const [start, end] = day.windowAt(t)
      return (end - start) / 3_600_000
    }
    expect(hours(Date.UTC(2026, 2, 8, 12))).toBe(23)
    expect(hours(Date.UTC(2026, 10, 1, 12))).toBe(25)
    expect(hours(Date.UTC(2026, 10, 2, 12))).toBe(24)
    // Local midnight, 05:00 UTC in winter.
    expect(day.windowAt(Date.UTC(2026, 0, 15, 12))[0]).toBe(Date.UTC(2026, 0, 15, 5))
  })

  it('start a day at 01:00 where midnight falls in a daylight-saving gap', () => {
    // Havana sprang forward at midnight on 8 March 2026: 00:00 became 01:00 (UTC−4 from −5).
    const [start] = calendarWindows('day', 'America/Havana').windowAt(Date.UTC(2026, 2, 8, 12))
    expect(new Date(start).toLocaleString('sv-SE', { timeZone: 'America/Havana' })).toBe(
      '2026-03-08 01:00:00',
    )
  })

  it('starts a Paris month at local midnight on the 1st, whatever the offset', () => {
    const month = calendarWindows('month', 'Europe/Paris')
    expect(month.windowAt(Date.UTC(2026, 6, 15))).toEqual([
      Date.UTC(2026, 5, 30, 22),
      Date.UTC(2026, 6, 31, 22),
    ])
    // 31 October 23:30 UTC is already November in Paris (UTC+1 after the change).
    expect(month.windowAt(Date.UTC(2026, 9, 31, 23, 30))[0]).toBe(Date.UTC(2026, 9, 31, 23))
  })

  it('refuses an unknown zone naming timeZone, and names zones canonically', () => {
    expect(() => calendarWindows('day', 'Mars/Olympus_Mons')).toThrow(/timeZone: unknown time zone/)
    expect(calendarWindows('day', 'europe/paris').timeZone).toBe('Europe/Paris')
    expect(calendarWindows('day').timeZone).toBe('UTC')
    expect(() => calendarWindows('fortnight' as CalendarUnit)).toThrow(/calendar: expected one of/)
  })

  it('names a zone as the runtime does, one it does not know as given (refused when built)', () => {
    expect(zoneName('europe/paris')).toBe('Europe/Paris')
    expect(zoneName('utc')).toBe('UTC')
    for (const unknown of ['Mars/Olympus_Mons', '', ' ']) expect(zoneName(unknown)).toBe(unknown)
  })
})
