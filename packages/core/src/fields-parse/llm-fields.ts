import { MAX_WAIT_MS } from './retry-after.js'
import type { ReadPolicy } from './types.js'

type Header = (name: string) => string | undefined
type Mutable<T> = { -readonly [K in keyof T]: T[K] }

const COUNT = /^\d+$/

/** A whole number ≥ 0; anything else (Azure OpenAI's `-1`, `1.5`, `1e3`) is no figure. */
function count(value: string | undefined): number | undefined {
  const text = value?.trim()
  if (text === undefined || !COUNT.test(text)) return undefined
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : undefined
}

const UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 1e-3,
  µs: 1e-3, // U+00B5 MICRO SIGN, as Go writes it
  μs: 1e-3, // U+03BC GREEK SMALL LETTER MU, the look-alike
  ns: 1e-6,
}
const DURATION = /^(?:\d+(?:\.\d+)?(?:h|ms|m|s|us|µs|μs|ns))+$/
const COMPONENT = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|μs|ns)/g
const SECONDS = /^\d+(?:\.\d+)?$/

/**
 * OpenAI's `x-ratelimit-reset-*`: a duration as Go writes one (`6m0s`, `1s`, `20ms`,
 * `1h2m3.5s`, `500µs`), as whole ms rounded up. A bare number is seconds, as Azure OpenAI sends
 * it. Undefined for anything else (a sign, an exponent, an empty unit, `1d`).
 */
export function durationToMs(value: string | undefined): number | undefined {
  const text = value?.trim()
  if (text === undefined || text === '') return undefined
  let ms: number
  if (SECONDS.test(text)) ms = Number(text) * 1000
  else if (DURATION.test(text)) {
    ms = 0
    for (const [, amount, unit] of text.matchAll(COMPONENT)) ms += Number(amount) * UNIT_MS[unit!]!
  } else return undefined
  // `1.1s` sums to 1100.0000000000002 in binary: rounded to the ns first, it stays 1100 ms.
  return Math.min(MAX_WAIT_MS, Math.ceil(Math.round(ms * 1e6) / 1e6))
}

const RFC_3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

/**
 * An RFC 3339 date-time (`2026-12-07T06:30:00Z`, `2026-12-07T07:30:00.5+01:00`) as ms since the
 * epoch; undefined for anything else, or for a date that does not exist (31 February). Parsed
 * by pattern, not by `Date.parse`, whose leniency differs between engines. A leap second (60) is
 * read as the next second.
 */
export function parseRfc3339(text: string): number | undefined {
  const match = RFC_3339.exec(text.trim())
  if (match === null) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  if (hour > 23 || minute > 59 || second > 60) return undefined
  const offsetHours = match[10] === undefined ? 0 : Number(match[10])
  const offsetMinutes = match[11] === undefined ? 0 : Number(match[11])
  if (offsetHours > 23 || offsetMinutes > 59) return undefined
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  const fraction = match[7] === undefined ? 0 : Number(`0${match[7]}`) * 1000
  const sign = match[9] === '-' ? -1 : 1
  const offsetMs = sign * (offsetHours * 60 + offsetMinutes) * 60_000
  return date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offsetMs
}

/** An RFC 3339 reset as ms from `now`, rounded up; a time already past is 0. */
function rfc3339ToMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || !Number.isFinite(now)) return undefined
  const at = parseRfc3339(value)
  return at === undefined ? undefined : Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(at - now)))
}

/** One policy per unit that has any figure, named and counted in that unit. */
function policiesOf(
  units: readonly string[],
  figures: (unit: string) => Pick<ReadPolicy, 'limit' | 'remaining' | 'resetMs'>,
): ReadPolicy[] | undefined {
  const out: ReadPolicy[] = []
  for (const unit of units) {
    const { limit, remaining, resetMs } = figures(unit)
    if (limit === undefined && remaining === undefined && resetMs === undefined) continue
    const policy: Mutable<ReadPolicy> = { name: unit, quotaUnit: unit }
    if (limit !== undefined) policy.limit = limit
    if (remaining !== undefined) policy.remaining = remaining
    if (resetMs !== undefined) policy.resetMs = resetMs
    out.push(policy)
  }
  return out.length === 0 ? undefined : out
}

/**
 * OpenAI's fields, also sent by APIs that copy them (Azure OpenAI, Groq):
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, one policy per unit, named
 * `requests` and `tokens`. The reset is the time until the quota is full again.
 */
export function readOpenAiFields(header: Header): ReadPolicy[] | undefined {
  return policiesOf(['requests', 'tokens'], (unit) => ({
    limit: count(header(`x-ratelimit-limit-${unit}`)),
    remaining: count(header(`x-ratelimit-remaining-${unit}`)),
    resetMs: durationToMs(header(`x-ratelimit-reset-${unit}`)),
  }))
}

/**
 * Anthropic's fields: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
 * {limit,remaining,reset}`, one policy per unit, named after it. The reset is an RFC 3339
 * time at which the quota is full again. `tokens` is the most restrictive token limit in effect.
 */
export function readAnthropicFields(header: Header, now: number): ReadPolicy[] | undefined {
  return policiesOf(['requests', 'tokens', 'input-tokens', 'output-tokens'], (unit) => ({
    limit: count(header(`anthropic-ratelimit-${unit}-limit`)),
    remaining: count(header(`anthropic-ratelimit-${unit}-remaining`)),
    resetMs: rfc3339ToMs(header(`anthropic-ratelimit-${unit}-reset`), now),
  }))
}
