// A leaf module: the rules layer tells a calendar window from a duration with it, without the
// time-zone code of calendar.ts.

/** The calendar periods a fixed window can be aligned to. Weeks are ISO weeks: Monday first. */
export type CalendarUnit = 'day' | 'week' | 'month' | 'year'

export const CALENDAR_UNITS: readonly CalendarUnit[] = ['day', 'week', 'month', 'year']

export function isCalendarUnit(value: unknown): value is CalendarUnit {
  return CALENDAR_UNITS.includes(value as CalendarUnit)
}
