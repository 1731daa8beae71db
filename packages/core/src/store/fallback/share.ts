import { fixedWindow } from '../../algorithms/fixed-window.js'
import { gcra } from '../../algorithms/gcra.js'
import { leakyBucket } from '../../algorithms/leaky-bucket.js'
import { slidingLog } from '../../algorithms/sliding-log.js'
import { slidingWindow } from '../../algorithms/sliding-window.js'
import { tokenBucket } from '../../algorithms/token-bucket.js'
import type { Algorithm } from '../../algorithms/types.js'
import { RateLimitError } from '../../errors.js'

// One process's share of a rule while the shared store fails: the same algorithm, built by its
// own factory from the rule's scaled parameters, with the allowance divided by the number of
// live instances. The memory store then decides with it as with any rule.

const RATE_FACTORIES = { token_bucket: tokenBucket, gcra, leaky_bucket: leakyBucket } as const

/**
 * `algorithm` with 1/`instances` of its allowance: a rate rule keeps its burst's share (at least
 * 1) and refills at exactly rate ÷ instances (the period is multiplied, so no fraction appears);
 * a window rule keeps its window and its limit's share (at least 1). Rounded down, so that
 * `instances` shares never add up to more than the rule: only a rule smaller than its number of
 * instances gets 1 each (up to `instances` in all).
 */
export function shareOf(algorithm: Algorithm, instances: number): Algorithm {
  const params = algorithm.params
  const name = algorithm.name
  let share: Algorithm | undefined
  if (params?.kind === 'rate' && name in RATE_FACTORIES) {
    share = RATE_FACTORIES[name as keyof typeof RATE_FACTORIES]({
      rate: params.unitsPerMs,
      periodMs: params.unitsPerToken * instances,
      burst: Math.max(1, Math.floor(params.burst / instances)),
    })
  } else if (params?.kind === 'window') {
    const limit = Math.max(1, Math.floor(params.limit / instances))
    if (name === 'fixed_window') {
      const calendar = params.calendar
      share =
        calendar === undefined
          ? fixedWindow({ limit, windowMs: params.windowMs, anchor: params.anchor ?? 'epoch' })
          : fixedWindow({ limit, calendar: calendar.unit, timeZone: calendar.timeZone })
    } else if (name === 'sliding_window') {
      share = slidingWindow({ limit, windowMs: params.windowMs, buckets: params.buckets })
    } else if (name === 'sliding_log') {
      share = slidingLog({ limit, windowMs: params.windowMs })
    }
  }
  if (share === undefined) {
    throw new RateLimitError(
      'ERR_RL_INVALID_RULE',
      `a ${name} rule cannot be shared out between instances (onStoreError: 'fallback')`,
      { field: 'onStoreError' },
    )
  }
  // A rule that settles keeps its states wide (in debt they do not fit 8 bytes): so does its share.
  return algorithm.packed === undefined ? { ...share, packed: undefined } : share
}

/**
 * When a unit admitted locally at `now` or before stops counting against the rule, as of `now`:
 * the start of the current window for a fixed window on epoch boundaries, else one reset span
 * (`spanOf`) back. Units admitted earlier would have been given back by now.
 */
export function countsSince(algorithm: Algorithm, now: number): number {
  const params = algorithm.params
  const epochWindow =
    params?.kind === 'window' &&
    algorithm.name === 'fixed_window' &&
    params.calendar === undefined &&
    params.anchor === undefined
  return epochWindow ? now - (now % params.windowMs) : now - spanOf(algorithm)
}

/** A window, or for a rate rule the time an empty bucket takes to fill (at least 1 ms). */
export function spanOf(algorithm: Algorithm): number {
  const params = algorithm.params
  if (params?.kind === 'rate') return Math.max(1, Math.ceil(params.capacity / params.unitsPerMs))
  if (params?.kind === 'window') return params.windowMs
  return 1
}
