import { wholeMilliseconds } from '../rules/duration.js'
import { typeName } from '../rules/validate-match.js'

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s(?:ec|econds?)?|m(?:in|inutes?)?|h(?:ours?)?|d(?:ays?)?)$/
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
}

/**
 * `toMilliseconds` (the same durations taken: `'500ms'`, `'60s'`, `'1.5m'`, `'1 day'`…), with
 * shorter messages: whole ms, or a problem.
 */
export function edgeMilliseconds(value: unknown): number | string {
  const match = typeof value === 'string' ? DURATION.exec(value.trim().toLowerCase()) : null
  if (match === null) {
    return typeof value === 'number'
      ? `a bare number has no unit: write '${value}s' or '${value}ms'`
      : `expected a duration such as '500ms', '60s', '1m', '1h' or '1 day', got ${typeName(value)}`
  }
  const unit = match[2] === 'ms' ? 'ms' : match[2]![0]!
  const ms = wholeMilliseconds(Number(match[1]) * UNIT_MS[unit]!)
  return ms === undefined || ms <= 0 ? `expected whole ms > 0, got ${typeName(value)}` : ms
}
