/**
 * The answer to "may this key spend `cost` now?" for one rule. All figures are whole numbers.
 */
export type Decision = {
  /** Admit (true) or deny (false). */
  readonly allowed: boolean
  /** Cost units left now, after this request's charge when allowed; rounded down, never negative. */
  readonly remaining: number
  /** The rule's quota: the burst of a rate rule, the limit of a window rule. */
  readonly limit: number
  /** Milliseconds until the key is back to full capacity; 0 when it already is. */
  readonly resetAfterMs: number
  /**
   * Set only when denied: the smallest wait in whole ms (rounded up) after which the same
   * request would pass if nothing else arrives. Exact for every algorithm but the sliding
   * window counter's estimate, where it is exact for the estimate.
   */
  readonly retryAfterMs: number | undefined
  /**
   * Set only by a queue rule (`leaky_queue`) on an admission: how long the request waits for its
   * slot, in whole ms (rounded up); 0 or absent when it goes on at once.
   */
  readonly delayMs?: number | undefined
}
