import type { Algorithm } from '../algorithms/types.js'
import type { Decision } from '../decision.js'
import type { RateLimitError } from '../errors.js'
import type { Store } from '../store/types.js'
import type { FallbackPart } from './fallback.js'
import type { PenaltyPart } from './penalised.js'
import type { Reporter } from './report.js'

/** A store's synchronous single-charge path (the memory store has one). */
export type ConsumeOne = (
  rule: string,
  algorithm: Algorithm,
  key: string,
  cost: number,
  now: number,
) => Decision

/** What deciding needs besides the rules: the store, its fast path and the failure policy. */
export type Engine = {
  readonly store: Store
  readonly consumeOne: ConsumeOne | undefined
  readonly reporter: Reporter
  /** `retryAfterMs` of a fail-closed denial. */
  readonly storeErrorRetryAfterMs: number
  /** How long an asynchronous store reply is awaited, or `false` for as long as it takes. */
  readonly storeTimeoutMs: number | false
  /** Penalties (the store's offences read into decisions), when the limiter has them. */
  readonly penalties: PenaltyPart | undefined
  /** Set on the engine that stands in for a clock that failed: why (see `ClockReader`). */
  readonly failure?: RateLimitError
  /** Local fallback (rules decided in this process while the store fails), when it has it. */
  readonly localFallback: FallbackPart | undefined
}

export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}
