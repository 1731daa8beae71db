// As it was before its code was shortened, for old-algorithms-differential.test.ts.
import { RateLimitError } from '../../errors.js'
import { whole } from '../../options/option-values.js'
import { refuseUnknownOptions } from '../../options/unknown-options.js'
import { greatestCommonDivisor, MAX_FIELD_INTEGER, MAX_TIME_MS } from '../integer.js'

/** A rate rule: `rate` units every `periodMs` (default one second), bursts of up to `burst`. */
export type RateParams = {
  /** Units granted per period, e.g. 100. */
  readonly rate: number
  /** The period in ms, e.g. 60_000. @default 1000 */
  readonly periodMs?: number
  /** Bucket size: the most a client can spend at once after idling. */
  readonly burst: number
}

/** A window rule: at most `limit` units in any window of `windowMs` (how "any" is read depends on the algorithm). */
export type WindowParams = {
  readonly limit: number
  readonly windowMs: number
}

/**
 * A rate reduced to lowest terms and scaled to integers: one token is `unitsPerToken` units, and
 * `unitsPerMs` units flow in each ms. 100 per 60 s becomes 1 unit per ms with 600 units per
 * token, so no fraction ever appears.
 */
export type ScaledRate = {
  readonly burst: number
  readonly unitsPerMs: number
  readonly unitsPerToken: number
  /** burst × unitsPerToken: a full bucket, in units. */
  readonly capacity: number
  readonly periodMs: number
  readonly rate: number
}

/** The parameters of a rate factory (`tokenBucket`, `gcra`, `leakyBucket`). */
export const RATE_PARAMS: readonly string[] = ['rate', 'periodMs', 'burst']

/** The parameters of a window factory (`slidingLog`). */
export const WINDOW_PARAMS: readonly string[] = ['limit', 'windowMs']

/**
 * Refuses, when an algorithm is built, a parameter `factory` does not read: from JavaScript,
 * `tokenBucket({ rate: 10, brust: 5 })` would otherwise build a bucket of another size without
 * a word, where a rule written as data is refused. Each is named with the closest known one;
 * an `undefined` value counts as not given.
 */
export function refuseUnknownParams(
  factory: string,
  params: object,
  known: readonly string[],
): void {
  if (typeof params === 'object' && params !== null) {
    refuseUnknownOptions(
      params,
      known,
      `${factory}()`,
      undefined,
      'parameter',
      'ERR_RL_INVALID_RULE',
    )
  }
}

export function invalid(field: string, message: string): RateLimitError {
  return new RateLimitError('ERR_RL_INVALID_RULE', `${field}: ${message}`, { field })
}

/**
 * What is wrong with a count (a rate, a burst, a limit): the one check of it, made by the rules
 * (every rule's problems reported at once) and by the factories (called from JavaScript) alike.
 */
export const countProblem: (value: unknown) => string | undefined = /* @__PURE__ */ whole({
  min: 1,
})

/**
 * A whole number ≥ 1; `sendable`: one sent in rate-limit fields (a limit, a burst, a rate as the
 * policy's quota), at most the largest they carry.
 */
function requireCount(field: string, value: unknown, sendable?: boolean): number {
  const problem = countProblem(value)
  if (problem !== undefined) throw invalid(field, problem)
  if (sendable && (value as number) > MAX_FIELD_INTEGER) {
    throw invalid(field, `at most ${MAX_FIELD_INTEGER}, got ${value}`)
  }
  return value as number
}

export function scaleRate(params: RateParams): ScaledRate {
  const rate = requireCount('rate', params.rate, true)
  const periodMs = requireCount('periodMs', params.periodMs ?? 1000)
  const burst = requireCount('burst', params.burst, true)
  const divisor = greatestCommonDivisor(rate, periodMs)
  const unitsPerMs = rate / divisor
  const unitsPerToken = periodMs / divisor
  const capacity = burst * unitsPerToken
  // Sums of two capacities and of a capacity and a time must stay exact.
  if (capacity * 2 + MAX_TIME_MS > Number.MAX_SAFE_INTEGER) {
    throw invalid('burst', 'too large for this rate: lower it or simplify the rate')
  }
  return { burst, unitsPerMs, unitsPerToken, capacity, periodMs, rate }
}

export function checkWindow(params: WindowParams): { limit: number; windowMs: number } {
  const limit = requireCount('limit', params.limit, true)
  const windowMs = requireCount('windowMs', params.windowMs)
  if (windowMs > MAX_TIME_MS)
    throw invalid('windowMs', `at most ${MAX_TIME_MS} ms, got ${windowMs}`)
  return { limit, windowMs }
}

export function costTooHigh(cost: number, limit: number): RateLimitError {
  return new RateLimitError(
    'ERR_RL_COST_EXCEEDS_CAPACITY',
    `a cost of ${cost} can never pass a rule whose capacity is ${limit}`,
    { field: 'cost' },
  )
}
