import { parseHttpDate } from './http-date.js'
import { MAX_WAIT_MS } from './retry-after.js'
import type { ReadPolicy } from './types.js'

/**
 * From this value on, an `X-RateLimit-Reset` is an epoch time in ms (10^12 ms is September
 * 2001); from `EPOCH_SECONDS_FROM` on, an epoch time in seconds (10^9 s is also September 2001);
 * below it, seconds from now. A delay of 10^9 s would be 31 years, and no epoch in seconds from
 * this century is below it, so the magnitude tells the three apart for any realistic value.
 */
export const EPOCH_MS_FROM = 1e12
/**
 * From this value on, a numeric reset is an epoch time in seconds, below it seconds from now (see
 * `EPOCH_MS_FROM`).
 */
export const EPOCH_SECONDS_FROM = 1e9

const NUMBER = /^\s*(\d+(?:\.\d+)?)\s*$/

function number(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const match = NUMBER.exec(value)
  return match === null ? undefined : Number(match[1])
}

function count(value: string | undefined): number | undefined {
  const n = number(value)
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined
}

/**
 * `X-RateLimit-Reset` as ms from `now`: seconds from now (Twitter-style clients, Tollgate's
 * `delta-seconds`), epoch seconds (GitHub, Twitter/X, Tollgate's default) or epoch ms, told
 * apart by magnitude (see `EPOCH_MS_FROM`); an HTTP-date is read too. A time already past is 0.
 */
export function resetToMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined
  const n = number(value)
  if (n === undefined) {
    const date = parseHttpDate(value, now)
    return date === undefined || !Number.isFinite(now) ? undefined : clampWait(date - now)
  }
  if (n < EPOCH_SECONDS_FROM) return clampWait(n * 1000)
  if (!Number.isFinite(now)) return undefined
  return clampWait(n < EPOCH_MS_FROM ? n * 1000 - now : n - now)
}

function clampWait(ms: number): number {
  return Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(ms)))
}

/**
 * The de facto fields: `X-RateLimit-Limit/-Remaining/-Reset` (GitHub and most APIs) or
 * `X-Rate-Limit-*` (Twitter/X). GitHub's `X-RateLimit-Resource` names the policy.
 */
export function readXRateLimit(
  header: (name: string) => string | undefined,
  now: number,
): ReadPolicy | undefined {
  for (const prefix of ['x-ratelimit-', 'x-rate-limit-']) {
    const limit = count(header(`${prefix}limit`))
    const remaining = count(header(`${prefix}remaining`))
    const resetMs = resetToMs(header(`${prefix}reset`), now)
    if (limit === undefined && remaining === undefined && resetMs === undefined) continue
    const policy: { -readonly [K in keyof ReadPolicy]: ReadPolicy[K] } = {
      name: header(`${prefix}resource`)?.trim() ?? '',
    }
    if (limit !== undefined) policy.limit = limit
    if (remaining !== undefined) policy.remaining = remaining
    if (resetMs !== undefined) policy.resetMs = resetMs
    return policy
  }
  return undefined
}
