// As it was before its code was shortened, for the differential tests of the algorithms and stores.
import type { Decision } from '../../decision.js'
import { RateLimitError } from '../../errors.js'
import { MAX_TIME_MS } from '../integer.js'
import type { Algorithm } from '../types.js'
import { costTooHigh } from './params.test-copy.js'

/** A key's state as a plain array, as returned by `step`. */
export type AlgorithmState = readonly number[]

/** What `step` returns: the key's next state, and the decision it led to. */
export type StepResult = { readonly state: AlgorithmState; readonly decision: Decision }

/**
 * The pure form of an algorithm: (state or nothing, cost, now) → (new state, decision). The
 * input state is never modified; a denied request returns the state it was given, moved only
 * when the clock stepped back further than the rule's reset span (see `Algorithm.decide`).
 * A fractional `now` is floored.
 * @example
 * const bucket = tokenBucket({ rate: 10, burst: 20 })
 * let { state, decision } = step(bucket, undefined, 1, 0)
 */
export function step(
  algorithm: Algorithm,
  state: AlgorithmState | undefined,
  cost: number,
  now: number,
): StepResult {
  checkCost(cost)
  now = wholeMs(now)
  checkTime(now)
  const next = state === undefined ? new Array<number>(algorithm.stateSize).fill(0) : [...state]
  if (next.length !== algorithm.stateSize) {
    throw new RateLimitError(
      'ERR_RL_STORE_REPLY',
      `${algorithm.name} state has ${algorithm.stateSize} numbers, got ${next.length}`,
    )
  }
  if (state === undefined) algorithm.init(next, 0, now)
  const decision = algorithm.decide(next, 0, cost, now, true)
  return { state: next, decision }
}

/**
 * Throws `ERR_RL_INVALID_COST` unless `cost` is a whole number ≥ 0, then, given the rule's
 * capacity `limit`, `ERR_RL_COST_EXCEEDS_CAPACITY` if `cost` is above it: the checks every store
 * makes on a charge.
 */
export function checkCost(cost: number, limit?: number): void {
  if (!Number.isSafeInteger(cost) || cost < 0) {
    throw new RateLimitError(
      'ERR_RL_INVALID_COST',
      `cost must be a whole number ≥ 0, got ${cost}`,
      {
        field: 'cost',
      },
    )
  }
  // A cost compared with no limit is false: without one, only the cost is checked.
  if (cost > (limit as number)) throw costTooHigh(cost, limit as number)
}

/**
 * A time in whole ms: a fractional one (a monotonic clock such as `performance.timeOrigin +
 * performance.now()`) is floored; anything that is not a time is returned as it is, for
 * `checkTime` to refuse.
 */
export function wholeMs(now: number): number {
  return typeof now === 'number' && now >= 0 && now <= MAX_TIME_MS ? Math.floor(now) : now
}

/**
 * A time given to a store or the limiter, in whole ms: `wholeMs` then `checkTime`, in one test
 * (a number from 0 to `MAX_TIME_MS` is floored; anything else is refused).
 */
export function wholeTime(now: number): number {
  if (typeof now === 'number' && now >= 0 && now <= MAX_TIME_MS) return Math.floor(now)
  checkTime(now)
  return now
}

/**
 * Throws `ERR_RL_INVALID_TIME` unless `now` is whole ms from 0 to `MAX_TIME_MS`: call `wholeMs`
 * first to accept a fractional clock.
 */
export function checkTime(now: number): void {
  if (!Number.isSafeInteger(now) || now < 0 || now > MAX_TIME_MS) {
    throw new RateLimitError(
      'ERR_RL_INVALID_TIME',
      `now must be whole ms between 0 and ${MAX_TIME_MS}, got ${now}`,
    )
  }
}
