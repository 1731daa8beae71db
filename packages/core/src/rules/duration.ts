import { shown } from '../options/option-values.js'
import type { Duration } from './types.js'

/**
 * An amount and its unit, each spelling of a unit in the group of its length: ms, then s (`sec`,
 * `second`, `seconds`), m (`min`, `minute`, `minutes`), h (`hour`, `hours`), d (`day`, `days`).
 */
const DURATION =
  /^(\d+(?:\.\d+)?)\s*(?:(ms)|(s|sec|seconds?)|(m|min|minutes?)|(h|hours?)|(d|days?))$/
const UNIT_MS = [1, 1000, 60_000, 3_600_000, 86_400_000]

/**
 * A duration in whole ms, or a problem description. Accepts a string with its unit, such as
 * `'500ms'`, `'60s'`, `'1.5m'`, `'1 day'`. A bare number is refused with the fix (files count
 * seconds, code used to count ms: the unit must be written). Zero, negative and fractional-ms
 * durations are refused: a window of zero cannot count anything.
 */
export function toMilliseconds(value: Duration | unknown): number | string {
  const match = typeof value === 'string' ? DURATION.exec(value.trim().toLowerCase()) : null
  if (match === null) {
    return typeof value === 'number'
      ? `a bare number has no unit: write '${value}s' or '${value}ms'`
      : `expected a duration such as '500ms', '60s' or '1h', got ${shown(value)}`
  }
  const [, amount, ...units] = match
  const ms = wholeMilliseconds(Number(amount) * UNIT_MS[units.findIndex(Boolean)]!)
  return ms === undefined || ms <= 0
    ? `expected a duration > 0 in whole ms, got ${shown(value)}`
    : ms
}

/**
 * `exact` rounded to whole ms when it is one up to floating-point noise (0.3 × 1000 is
 * 300.00000000000006), else undefined.
 */
export function wholeMilliseconds(exact: number): number | undefined {
  const ms = Math.round(exact)
  if (!Number.isSafeInteger(ms) || Math.abs(exact - ms) > 1e-9 * Math.max(1, ms)) return undefined
  return ms
}
