/**
 * Every error Tollgate throws on purpose. Being rate-limited is not one of them: a denial is a
 * `Decision` with `allowed: false`. Errors are for configuration mistakes, requests that can
 * never be served, and stores that fail.
 */
export type RateLimitErrorCode =
  /** A rule or rule set is invalid; `rule` and `field` say which. Thrown at start-up. */
  | 'ERR_RL_INVALID_RULE'
  /**
   * An option (of a factory, a store or an adapter) is unknown or has a value it cannot take;
   * `field` names it. Thrown at start-up.
   */
  | 'ERR_RL_INVALID_OPTION'
  /**
   * An adapter's middleware was handed another framework's request (`@tollgate/express`'s on a
   * Koa app): thrown on its first request, naming the adapter to import instead.
   */
  | 'ERR_RL_WRONG_FRAMEWORK'
  /** A cost that is not a whole number ≥ 0. */
  | 'ERR_RL_INVALID_COST'
  /** A request whose cost exceeds the rule's capacity: it can never pass, so retrying is pointless. */
  | 'ERR_RL_COST_EXCEEDS_CAPACITY'
  /** A time that is not a whole number of ms between 0 and `MAX_TIME_MS`. */
  | 'ERR_RL_INVALID_TIME'
  /** A rule id that the limiter does not know. */
  | 'ERR_RL_UNKNOWN_RULE'
  /** The store did not answer (down, timed out). The rule's failure policy decides what happens. */
  | 'ERR_RL_STORE_UNAVAILABLE'
  /** The store answered with something that is not a valid state or decision. */
  | 'ERR_RL_STORE_REPLY'
  /**
   * The limiter's clock threw or returned something that is not a time. Decided like a store
   * failure: each rule's failure policy decides, and `onError` receives it.
   */
  | 'ERR_RL_CLOCK_FAILED'
  /**
   * An operation needs a method the store does not have (an operator's `peek` on a store
   * without one): the store does not support it yet.
   */
  | 'ERR_RL_STORE_UNSUPPORTED'

/** What a `RateLimitError` points at: the rule and the field, when it concerns one. */
export type RateLimitErrorDetails = {
  /** The id of the rule concerned, when there is one. */
  readonly rule?: string
  /** The rule field or option concerned, when there is one. */
  readonly field?: string
}

/**
 * The one error class Tollgate throws, for a wrong configuration or a failed store (being limited
 * is a `Decision`, not an error). Branch on `code`; test with `isRateLimitError`, which also
 * recognises a copy from another build.
 * @example
 * try {
 *   createLimiter({ rules })
 * } catch (error) {
 *   if (isRateLimitError(error) && error.code === 'ERR_RL_INVALID_RULE') {
 *     console.error(error.rule, error.field)
 *   }
 * }
 */
export class RateLimitError extends Error {
  override readonly name = 'RateLimitError'
  readonly code: RateLimitErrorCode
  readonly rule: string | undefined
  readonly field: string | undefined

  constructor(
    code: RateLimitErrorCode,
    message: string,
    options: RateLimitErrorDetails & { cause?: unknown } = {},
  ) {
    // Error reads only `cause` of the options: none is set when none is given.
    super(`[tollgate] ${message}`, options.cause === undefined ? undefined : options)
    this.code = code
    this.rule = options.rule
    this.field = options.field
  }
}

/**
 * True for any Tollgate error, also one thrown by another copy of the package (ESM and CJS
 * builds can both be loaded in one process, so `instanceof` alone is not enough).
 */
export function isRateLimitError(error: unknown): error is RateLimitError {
  // Every RateLimitError has both; an error of another copy of the package is no instance.
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown }
  return name === 'RateLimitError' && typeof code === 'string'
}
