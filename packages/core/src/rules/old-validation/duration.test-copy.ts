// The rule validation as it was before its texts were shortened and its algorithm-specific
// refusals moved to the factories (commit 8b52371), for validation-differential.test.ts.
import type { Duration } from '../types.js'

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
  if (typeof value === 'number') {
    const shown = Number.isFinite(value) ? String(value) : 'n'
    return `a bare number has no unit: write '${shown}s' for seconds or '${shown}ms' for milliseconds (got ${value})`
  }
  if (typeof value !== 'string') {
    return `expected a duration with its unit, such as '60s' or '500ms', got ${value === null ? 'null' : typeof value}`
  }
  const match = DURATION.exec(value.trim().toLowerCase())
  if (match === null) {
    return `expected a duration such as '500ms', '60s', '1m', '1h' or '1 day', got ${JSON.stringify(value)}`
  }
  const [, amount, ...units] = match
  const ms = wholeMilliseconds(Number(amount) * UNIT_MS[units.findIndex(Boolean)]!)
  if (ms === undefined) return `${JSON.stringify(value)} is not a whole number of milliseconds`
  if (ms <= 0) return `expected a duration > 0, got ${JSON.stringify(value)}`
  return ms
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
