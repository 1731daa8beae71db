import { parseHttpDate } from './http-date.js'

/** The longest wait any field is read as: about 285,000 years, a safe integer of ms. */
export const MAX_WAIT_MS = Number.MAX_SAFE_INTEGER

const SECONDS = /^\d+(?:\.\d+)?$/

/**
 * A wait given in seconds, as whole ms rounded up; undefined for anything but a non-negative
 * number. Decimals (`1.5`) are accepted although the fields define whole seconds: some servers
 * send them, and reading them costs nothing.
 */
export function secondsToMs(text: string): number | undefined {
  const value = text.trim()
  if (!SECONDS.test(value)) return undefined
  return Math.min(MAX_WAIT_MS, Math.ceil(Number(value) * 1000))
}

/**
 * `Retry-After` (RFC 9110 §10.2.3) as the wait in whole ms from `now`: delay-seconds, or an
 * HTTP-date (a date already past is a wait of 0). Undefined when the field is absent or
 * malformed (a negative number, a bad date): the field is then ignored, as RFC 9110 says.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (typeof value !== 'string') return undefined
  const seconds = secondsToMs(value)
  if (seconds !== undefined) return seconds
  const date = parseHttpDate(value, now)
  if (date === undefined || !Number.isFinite(now)) return undefined
  return Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(date - now)))
}
