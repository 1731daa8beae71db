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

/** RFC 9110 §10.2.3: `delay-seconds = 1*DIGIT`, nothing else (no sign, point or exponent). */
const DELAY_SECONDS = /^[0-9]+$/

/**
 * A field line's optional whitespace (OWS: spaces and tabs) is not part of the field's value
 * (RFC 9110 §5.5); fetch's `Headers` strips it, a raw lookup may not. Any other whitespace
 * (a no-break space, a line feed) is no OWS and leaves the value malformed.
 */
const OWS_AROUND = /^[ \t]+|[ \t]+$/g

/**
 * `Retry-After` (RFC 9110 §10.2.3) as the wait in whole ms from `now`: delay-seconds (digits
 * only), or an HTTP-date (a date already past is a wait of 0). Undefined when the field is
 * absent or malformed (`1.5`, `-1`, `1e3`, `1 5`): the field is then ignored, as RFC 9110 says.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (typeof value !== 'string') return undefined
  const text = value.replace(OWS_AROUND, '')
  // What is left around the value is whitespace of another kind, which `parseHttpDate` trims.
  if (text !== text.trim()) return undefined
  if (DELAY_SECONDS.test(text)) return Math.min(MAX_WAIT_MS, Number(text) * 1000)
  const date = parseHttpDate(text, now)
  if (date === undefined || !Number.isFinite(now)) return undefined
  return Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(date - now)))
}
