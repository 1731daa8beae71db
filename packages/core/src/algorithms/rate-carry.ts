import type { UseForm } from './carried-use.js'
import { ceilDiv, floorDiv } from './integer.js'
import type { Algorithm, AlgorithmParams, StateSlots } from './types.js'

/*
 * The amount used of a rate rule (token bucket, GCRA, leaky bucket meter), in its scaled units:
 * what the bucket lacks of full, the water in it, how far the TAT lies ahead. The three make the
 * same decisions on it, so a state converts exactly from one into another.
 */

type RateParams = Extract<AlgorithmParams, { kind: 'rate' }>

function rateOf(algorithm: Algorithm): RateParams {
  return algorithm.params as RateParams
}

/** Full in `ceil(capacity / unitsPerMs)` ms: a state further ahead, the clock stepped back. */
function fillMs({ capacity, unitsPerMs }: RateParams): number {
  return ceilDiv(capacity, unitsPerMs)
}

/** A token bucket's level or a leaky bucket's water at `now`, after its own clock-step rules. */
function bucketAt(
  params: RateParams,
  slots: StateSlots,
  offset: number,
  now: number,
  sign: 1 | -1,
) {
  const { capacity, unitsPerMs } = params
  let last = slots[offset + 1]!
  if (last - now > fillMs(params)) last = now
  const elapsed = Math.max(now, last) - last
  // Beyond two fill times full (empty), whatever a settle's debt left.
  if (elapsed >= ceilDiv(2 * capacity, unitsPerMs)) return sign === 1 ? capacity : 0
  return sign === 1
    ? Math.min(capacity, slots[offset]! + elapsed * unitsPerMs)
    : Math.max(0, slots[offset]! - elapsed * unitsPerMs)
}

/** Ticks the TAT lies ahead of `now`: one number of ticks, or whole ms and ticks beyond. */
function tatAhead(
  params: RateParams,
  algorithm: Algorithm,
  slots: StateSlots,
  offset: number,
  now: number,
) {
  const { capacity, unitsPerMs } = params
  const ahead =
    algorithm.stateSize === 1
      ? slots[offset]! - now * unitsPerMs
      : (slots[offset]! - now) * unitsPerMs + slots[offset + 1]!
  // Held up to two fill times and a ms (gcra.ts); beyond, moved to a drained bucket.
  if (ahead > (2 * fillMs(params) + 1) * unitsPerMs) return capacity
  return Math.max(0, ahead)
}

export const rateUse: UseForm = {
  full: (algorithm) => rateOf(algorithm).capacity,
  perUnit: (algorithm) => rateOf(algorithm).unitsPerToken,
  usedAt(algorithm, slots, offset, now) {
    const params = rateOf(algorithm)
    if (algorithm.name === 'gcra') return tatAhead(params, algorithm, slots, offset, now)
    if (algorithm.name === 'leaky_bucket') return bucketAt(params, slots, offset, now, -1)
    return params.capacity - bucketAt(params, slots, offset, now, 1)
  },
  withUse(algorithm, used, now) {
    const { capacity, unitsPerMs } = rateOf(algorithm)
    if (algorithm.name === 'gcra') {
      if (algorithm.stateSize === 1) return [now * unitsPerMs + used]
      const ms = floorDiv(used, unitsPerMs)
      return [now + ms, used - ms * unitsPerMs]
    }
    // Beyond the allowance (`keep`'s debt, at most one more): the bucket is held empty (full of
    // water) until the debt has refilled, by moving its last refill ahead of `now`.
    const debt = Math.max(0, used - capacity)
    const at = now + ceilDiv(debt, unitsPerMs)
    if (algorithm.name === 'leaky_bucket') return [Math.min(used, capacity), at]
    return [Math.max(0, capacity - used), at]
  },
}
