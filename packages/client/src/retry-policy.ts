import type { ReadFields } from '@tollgate/core/fields'
import { checkWhole, refuseUnknownOptions } from '@tollgate/core/store'

/** When and how a refused call is sent again. */
export type RetryOptions = {
  /** Attempts in all, the first included; 1 never retries. @default 3 */
  readonly attempts?: number | undefined
  /**
   * The longest a call may take from its start, waits included (ms). A retry whose wait would
   * end later is not made: the refusal is returned at once, with its Retry-After for the caller.
   * @default 60_000
   */
  readonly maxTotalMs?: number | undefined
  /** Statuses that mean "not now": 429 Too Many Requests and 503 Service Unavailable. @default [429, 503] */
  readonly statuses?: readonly number[] | undefined
  /**
   * Retry every method, not only those RFC 9110 calls idempotent (GET, HEAD, OPTIONS, TRACE,
   * PUT, DELETE). A request with an `Idempotency-Key` header is retried whatever its method.
   * @default false
   */
  readonly unsafeMethods?: boolean | undefined
  /** Without any advertised wait: full-jitter backoff, at most base × 2^(retry − 1). @default 500 */
  readonly backoffBaseMs?: number | undefined
  /** The most one backoff waits. @default 30_000 */
  readonly maxBackoffMs?: number | undefined
}

export type ResolvedRetry = {
  readonly attempts: number
  readonly maxTotalMs: number
  readonly statuses: ReadonlySet<number>
  readonly unsafeMethods: boolean
  readonly backoffBaseMs: number
  readonly maxBackoffMs: number
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])

function option(name: string, value: number | undefined, fallback: number, least: number): number {
  if (value === undefined) return fallback
  return checkWhole(name, value, { min: least }, 'createClient()')
}

/** Every retry option (the type makes sure none is left out). */
const RETRY_OPTION_NAMES = Object.keys({
  attempts: true,
  maxTotalMs: true,
  statuses: true,
  unsafeMethods: true,
  backoffBaseMs: true,
  maxBackoffMs: true,
} satisfies Record<keyof RetryOptions, true>)

export function resolveRetry(options: RetryOptions | false | undefined): ResolvedRetry {
  const given = options === false ? { attempts: 1 } : (options ?? {})
  refuseUnknownOptions(given, RETRY_OPTION_NAMES, 'createClient() retry')
  const statuses = given.statuses ?? [429, 503]
  for (const status of statuses) option('retry.statuses', status, 0, 100)
  return {
    attempts: option('retry.attempts', given.attempts, 3, 1),
    maxTotalMs: option('retry.maxTotalMs', given.maxTotalMs, 60_000, 0),
    statuses: new Set(statuses),
    unsafeMethods: given.unsafeMethods ?? false,
    backoffBaseMs: option('retry.backoffBaseMs', given.backoffBaseMs, 500, 0),
    maxBackoffMs: option('retry.maxBackoffMs', given.maxBackoffMs, 30_000, 0),
  }
}

/** True when sending `request` twice is safe, or the caller said it is. */
export function mayRepeat(request: Request, retry: ResolvedRetry): boolean {
  return (
    retry.unsafeMethods || IDEMPOTENT.has(request.method) || request.headers.has('idempotency-key')
  )
}

/**
 * The wait a refusal asks for: its Retry-After, else the longest `t` of a policy it reports as
 * exhausted (`r=0`), else none (undefined: back off).
 */
export function advertisedWait(
  fields: ReadFields,
): { reason: 'retry-after' | 'policy'; delayMs: number; policy: string | undefined } | undefined {
  if (fields.retryAfterMs !== undefined) {
    const exhausted = fields.policies.find((p) => p.remaining === 0)
    return { reason: 'retry-after', delayMs: fields.retryAfterMs, policy: exhausted?.name }
  }
  let longest: { reason: 'policy'; delayMs: number; policy: string } | undefined
  for (const policy of fields.policies) {
    if (policy.remaining !== 0 || policy.resetMs === undefined) continue
    if (longest === undefined || policy.resetMs > longest.delayMs) {
      longest = { reason: 'policy', delayMs: policy.resetMs, policy: policy.name }
    }
  }
  return longest
}

/**
 * Full jitter (AWS's "Exponential Backoff and Jitter"): uniform in [0, min(cap, base × 2^n)],
 * so refused clients spread out instead of coming back together.
 */
export function backoff(retry: ResolvedRetry, retryNumber: number, random: () => number): number {
  const ceiling = Math.min(retry.maxBackoffMs, retry.backoffBaseMs * 2 ** (retryNumber - 1))
  return Math.floor(clampUnit(random()) * (ceiling + 1))
}

/**
 * An advertised wait plus full jitter over [0, min(maxJitterMs, wait)]: never earlier than the
 * server asked, and spread by up to the wait itself, so a herd refused until the same window
 * boundary does not return in the same millisecond.
 */
export function withJitter(waitMs: number, maxJitterMs: number, random: () => number): number {
  const spread = Math.min(maxJitterMs, waitMs)
  return waitMs + Math.floor(clampUnit(random()) * (spread + 1))
}

/** A random source that strays outside [0, 1) is held inside it (and NaN read as 0). */
function clampUnit(value: number): number {
  return value >= 0 && value < 1 ? value : value >= 1 ? 1 - Number.EPSILON : 0
}

/**
 * The most jitter a learned wait for a reset gets: a fortieth of it (and at most `maxJitterMs`).
 * A refused herd must be spread, as it comes back to one exhausted quota; a learned wait is
 * each client's own quota coming back, so spreading it spends that client's time. Each window
 * already costs the client up to a second of `t` rounded up; a tenth on top ran a fixed window
 * that starts off the client's first call at 1.27 × the ideal time, a fortieth keeps it within
 * 1.2 × and still spreads clients that share a boundary over 25 ms of each second waited. A
 * wait for units coming back at the policy's rate gets none: there is no boundary to herd at.
 */
export function learnedJitterMs(waitMs: number, maxJitterMs: number): number {
  return Math.min(maxJitterMs, Math.floor(waitMs / 40))
}
